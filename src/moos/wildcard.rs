//! MOOS's glob matching (`MOOSWildCmp`): `*` matches any run of
//! characters (also none), `?` exactly one; everything else literally and
//! case-sensitively. Iterative, O(len(pattern) × len(text)) at worst, no
//! recursion (hostile patterns cannot blow the stack).

/// Whether `text` matches the glob `pattern`.
pub fn wild_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    // Position of the last `*` in the pattern and the text index it matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A wildcard registration: `AppPattern=..,VarPattern=..,Interval=..`.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// Glob on the writer's name.
    pub app: String,
    /// Glob on the variable name.
    pub var: String,
    /// Minimum interval between deliveries, s (MOOS time); 0 = every write.
    pub interval: f64,
}

impl Filter {
    /// Parse the sval of a `*`/`/` message. Missing patterns default to `*`,
    /// a missing or unreadable interval to 0; `None` if a key is unknown.
    pub fn parse(sval: &str) -> Option<Filter> {
        let mut f = Filter {
            app: "*".into(),
            var: "*".into(),
            interval: 0.0,
        };
        for part in sval.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = part.split_once('=')?;
            match k.trim().to_ascii_lowercase().as_str() {
                "apppattern" => f.app = v.trim().to_string(),
                "varpattern" => f.var = v.trim().to_string(),
                "interval" => {
                    f.interval = v
                        .trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite() && *x >= 0.0)
                        .unwrap_or(0.0)
                }
                _ => return None,
            }
        }
        Some(f)
    }

    /// The sval form.
    pub fn to_sval(&self) -> String {
        format!(
            "AppPattern={},VarPattern={},Interval={}",
            self.app, self.var, self.interval
        )
    }

    /// Whether a write of `var` by `app` matches.
    pub fn matches(&self, app: &str, var: &str) -> bool {
        wild_match(&self.var, var) && wild_match(&self.app, app)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(wild_match("*", ""));
        assert!(wild_match("NAV_*", "NAV_X"));
        assert!(!wild_match("NAV_*", "NAVX"));
        assert!(wild_match("N?V_*", "NAV_HEADING"));
        assert!(wild_match("*_X", "NAV_X"));
        assert!(!wild_match("*_X", "NAV_XY"));
        assert!(wild_match("a*b*c", "aXXbYYbc"));
        assert!(!wild_match("a*b*c", "aXXbYYb"));
        assert!(!wild_match("nav_x", "NAV_X"));
        assert!(wild_match(&"*".repeat(200), &"a".repeat(200)));
    }

    #[test]
    fn filter_sval() {
        let f = Filter::parse("AppPattern=usim*,VarPattern=NAV_*,Interval=0.5").unwrap();
        assert_eq!(f.interval, 0.5);
        assert!(f.matches("usim_a", "NAV_X"));
        assert!(!f.matches("pHelm", "NAV_X"));
        assert_eq!(Filter::parse(&f.to_sval()), Some(f));
        assert!(Filter::parse("Bogus=1").is_none());
    }
}
