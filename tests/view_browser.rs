//! `usim view` in a real browser: Debian's headless Chromium driven through
//! the DevTools protocol (a minimal client over a WebSocket, below), against
//! a real `usim up --view` with two vehicles on the embedded broker.
//!
//! Without Chromium the test says SKIPPED and passes, unless
//! `USIM_REQUIRE_CHROMIUM=1` (CI) makes that a failure. `CHROMIUM=/path`
//! chooses the binary.
mod moos_util;
mod mqtt_util;
mod view_util;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use mqtt_util::{node_report, topic, Proc, Watcher};

fn chromium_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Headless Chromium with a fresh profile; killed when dropped.
struct Browser {
    proc: Proc,
    _profile: tempfile::TempDir,
    ws_url: String,
}

impl Browser {
    fn launch(exe: &PathBuf, log_dir: &std::path::Path) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let mut cmd = Command::new(exe);
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            "--window-size=1200,760",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank");
        let proc = Proc::spawn("chromium", cmd, log_dir.join("chromium.log"));
        assert!(
            proc.wait_log("DevTools listening on ws://", Duration::from_secs(30)),
            "Chromium did not open its DevTools port:\n{}",
            proc.log()
        );
        let ws_url = proc
            .log()
            .lines()
            .find_map(|l| {
                l.split_once("DevTools listening on ")
                    .map(|(_, u)| u.trim().to_string())
            })
            .expect("DevTools URL");
        Browser {
            proc,
            _profile: profile,
            ws_url,
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SIGTERM lets Chromium take its helper processes down with it.
        if self.proc.terminate(Duration::from_secs(5)).is_none() {
            self.proc.kill();
        }
    }
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A minimal DevTools-protocol client: one browser connection, one page
/// session (flat mode: `sessionId` on each message).
struct Cdp {
    ws: Ws,
    next_id: u64,
    session: Option<String>,
}

impl Cdp {
    async fn connect(url: &str) -> Cdp {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("connect to DevTools");
        Cdp {
            ws,
            next_id: 1,
            session: None,
        }
    }

    /// Call `method`; events in between are skipped. Panics on a protocol error.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::Text(msg.to_string()))
            .await
            .expect("send to DevTools");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = tokio::time::timeout(left, self.ws.next())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method}"))
                .expect("DevTools socket open")
                .expect("DevTools socket ok");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(&t).expect("DevTools JSON");
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
        }
    }

    /// Open `url` in a new page and attach to it.
    async fn open_page(&mut self, url: &str) -> String {
        let target = self
            .call("Target.createTarget", json!({ "url": url }))
            .await["targetId"]
            .as_str()
            .expect("targetId")
            .to_string();
        let session = self
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
            )
            .await["sessionId"]
            .as_str()
            .expect("sessionId")
            .to_string();
        self.session = Some(session);
        target
    }

    /// Evaluate a JavaScript expression in the page; its value as JSON.
    async fn eval(&mut self, expr: &str) -> Value {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
            )
            .await;
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Poll `expr` until it is `true`.
    async fn wait_true(&mut self, expr: &str, timeout: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if self.eval(expr).await == json!(true) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// A real mouse click (press and release) at page coordinates.
    async fn click_at(&mut self, x: f64, y: f64) {
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1 }),
            )
            .await;
        }
    }

    /// Click the middle of the element `selector`.
    async fn click(&mut self, selector: &str) {
        let r = self
            .eval(&format!(
                "(() => {{ const r = document.querySelector({sel}).getBoundingClientRect(); \
                 return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
                sel = json!(selector)
            ))
            .await;
        let (x, y) = (r[0].as_f64().expect("x"), r[1].as_f64().expect("y"));
        self.click_at(x, y).await;
    }

    /// Type `text` into the input `selector` (replacing its value) as keystrokes.
    async fn type_into(&mut self, selector: &str, text: &str) {
        self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); e.focus(); e.select(); return true; }})()",
            sel = json!(selector)
        ))
        .await;
        self.call("Input.insertText", json!({ "text": text })).await;
    }
}

#[test]
fn the_page_shows_and_commands_the_fleet() {
    let Some(chromium) = chromium_path() else {
        assert!(
            std::env::var_os("USIM_REQUIRE_CHROMIUM").is_none(),
            "USIM_REQUIRE_CHROMIUM is set but chromium is not installed"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: chromium is not installed (apt-get install -y chromium); \
             this browser test passes without running"
        );
        return;
    };
    let fleet = view_util::start(&[("alpha", 0.0, 0.0, 0.0), ("bravo", 25.0, -10.0, 90.0)]);
    let watch = Watcher::new(
        fleet.broker_port,
        &[topic("+", "NODE_REPORT"), topic("+", "status")],
    );
    let browser = Browser::launch(&chromium, fleet.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        let target = cdp.open_page(&fleet.url).await;

        // 1. Both vehicles, named, at the positions they publish.
        assert!(
            cdp.wait_true(
                "['alpha','bravo'].every(n => window.usimView && window.usimView.vehicles.get(n) \
                 && Number.isFinite(window.usimView.vehicles.get(n).x))",
                Duration::from_secs(20)
            )
            .await,
            "the page never showed both vehicles: {}",
            cdp.eval("JSON.stringify(window.usimView && [...window.usimView.vehicles.keys()])").await
        );
        assert!(fleet.wait_clients(1, Duration::from_secs(20)), "{}", fleet.status());
        for name in ["alpha", "bravo"] {
            let v = cdp
                .eval(&format!(
                    "(() => {{ const v = window.usimView.vehicles.get({n}); return {{x: v.x, y: v.y, k: v.k}}; }})()",
                    n = json!(name)
                ))
                .await;
            let k = v["k"].as_f64().expect("k");
            // The report the vehicle published with that iteration index.
            let published = watch
                .wait_after(0, &topic(name, "NODE_REPORT"), Duration::from_secs(20), |p| {
                    node_report(p)["k"].as_f64() == Some(k)
                })
                .unwrap_or_else(|| panic!("{name}: no published NODE_REPORT with k = {k}"));
            let r = node_report(&published.payload);
            let (px, py) = (r["x"].as_f64().unwrap(), r["y"].as_f64().unwrap());
            let (vx, vy) = (v["x"].as_f64().unwrap(), v["y"].as_f64().unwrap());
            assert!(
                (px - vx).hypot(py - vy) <= 1.0,
                "{name}: page at ({vx}, {vy}), published ({px}, {py})"
            );
        }
        // Start positions as configured (so the comparison above is not 0 = 0).
        let bravo_x = cdp.eval("window.usimView.vehicles.get('bravo').x").await.as_f64().unwrap();
        assert!((bravo_x - 25.0).abs() < 1.0, "bravo x {bravo_x}");
        let names = cdp
            .eval("[...document.querySelectorAll('#rows tr')].map(r => r.dataset.name + ':' + r.cells[1].textContent)")
            .await;
        assert_eq!(names, json!(["alpha:online", "bravo:online"]));

        // 2. Thrust through the page's controls: click alpha's row, type, click Send.
        cdp.click("#rows tr[data-name=\"alpha\"]").await;
        assert_eq!(cdp.eval("window.usimView.selected").await, json!("alpha"));
        let mark = watch.mark();
        cdp.type_into("#thrust", "fast").await;
        cdp.click("#send-thrust").await;
        assert!(
            cdp.wait_true(
                "document.getElementById('msg').className === 'refused' && \
                 document.getElementById('msg').textContent.includes('not a number')",
                Duration::from_secs(20)
            )
            .await,
            "a non-numeric thrust was not refused on the page: {}",
            cdp.eval("document.getElementById('msg').textContent").await
        );
        cdp.type_into("#thrust", "80").await;
        cdp.click("#send-thrust").await;
        assert!(
            cdp.wait_true(
                "document.getElementById('msg').className === 'ok'",
                Duration::from_secs(20)
            )
            .await,
            "thrust not sent: {}",
            cdp.eval("document.getElementById('msg').textContent").await
        );
        let fast = watch.wait_after(mark, &topic("alpha", "NODE_REPORT"), Duration::from_secs(15), |p| {
            node_report(p)["speed"].as_f64().is_some_and(|s| s > 1.0)
        });
        assert!(fast.is_some(), "alpha's published speed did not rise");
        let bravo_speed = watch
            .latest(&topic("bravo", "NODE_REPORT"))
            .and_then(|p| node_report(&p)["speed"].as_f64());
        assert_eq!(bravo_speed, Some(0.0), "bravo moved: the command went to the wrong vehicle");
        // The page shows the speed too.
        assert!(
            cdp.wait_true("window.usimView.vehicles.get('alpha').speed > 1.0", Duration::from_secs(20)).await
        );

        // 3. Reset by clicking on the map: at a quarter of the canvas from
        // its top left corner, wherever that is in metres.
        cdp.click("#arm-reset").await;
        let p = cdp
            .eval(
                "(() => { const c = document.getElementById('canvas').getBoundingClientRect(); \
                 const sx = c.width / 4, sy = c.height / 4; \
                 const a = window.usimView.vehicles.get('alpha'); \
                 return [c.left + sx, c.top + sy, ...window.usimView.screenToWorld(sx, sy), a.x, a.y]; })()",
            )
            .await;
        let at = |i: usize| p[i].as_f64().expect("number");
        let (wx, wy) = (at(2), at(3));
        assert!((wx - at(4)).hypot(wy - at(5)) > 5.0, "the clicked point ({wx}, {wy}) is too near alpha");
        let mark = watch.mark();
        cdp.click_at(at(0), at(1)).await;
        let reset = watch.wait_after(mark, &topic("alpha", "NODE_REPORT"), Duration::from_secs(20), |p| {
            let r = node_report(p);
            let (x, y) = (r["x"].as_f64().unwrap_or(f64::NAN), r["y"].as_f64().unwrap_or(f64::NAN));
            (x - wx).hypot(y - wy) < 1.5
        });
        assert!(
            reset.is_some(),
            "alpha was not reset to the clicked point ({wx:.1}, {wy:.1}): {}",
            cdp.eval("JSON.stringify(window.usimView.replies)").await
        );

        // 4. A screenshot, read back by the png crate: not blank.
        let shot = cdp
            .call("Page.captureScreenshot", json!({ "format": "png" }))
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("data"))
            .expect("base64");
        let path = fleet.dir.path().join("view.png");
        std::fs::write(&path, &bytes).unwrap();
        check_not_blank(&path);
        if let Some(keep) = std::env::var_os("USIM_VIEW_SCREENSHOT") {
            // To look at it: USIM_VIEW_SCREENSHOT=/tmp/view.png cargo test --test view_browser
            std::fs::copy(&path, keep).expect("copy the screenshot");
        }

        // 5. A killed vehicle is shown offline within 3 s.
        let pid = fleet.vehicle_pid("bravo");
        // SAFETY: kill(2) on a child of our `usim up`.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
        let killed = Instant::now();
        assert!(
            cdp.wait_true(
                "window.usimView.stateOf('bravo') === 'offline' && \
                 document.querySelector('#rows tr[data-name=\"bravo\"]').cells[1].textContent === 'offline'",
                Duration::from_secs(3)
            )
            .await,
            "bravo not shown offline within 3 s (state {})",
            cdp.eval("window.usimView.stateOf('bravo')").await
        );
        eprintln!("bravo shown offline {:.0} ms after SIGKILL", killed.elapsed().as_secs_f64() * 1e3);
        assert_eq!(cdp.eval("window.usimView.stateOf('alpha')").await, json!("online"));

        // 6. Closing the page ends its server task.
        cdp.session = None;
        cdp.call("Target.closeTarget", json!({ "targetId": target })).await;
        assert!(
            fleet.wait_clients(0, Duration::from_secs(20)),
            "the closed page's task is still there: {}",
            fleet.status()
        );
        // Close the browser through the protocol: Chromium then stops and
        // reaps its helper processes itself.
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({}))).await;
    });
    let mut browser = browser;
    if browser.proc.wait_exit(Duration::from_secs(10)).is_none() {
        eprintln!("Chromium did not exit after Browser.close");
    }
    drop(browser);
}

/// The PNG decodes, has the page's size, and shows several distinct colours.
fn check_not_blank(path: &std::path::Path) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("open PNG"));
    let mut reader = decoder.read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert!(
        info.width >= 800 && info.height >= 500,
        "{}x{}",
        info.width,
        info.height
    );
    let channels = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        colours.insert(px[..3.min(channels)].to_vec());
    }
    assert!(
        colours.len() >= 8,
        "screenshot {} has {} colours: blank?",
        path.display(),
        colours.len()
    );
}

/// Chromium, or `None` after saying SKIPPED (a failure under USIM_REQUIRE_CHROMIUM).
fn chromium_or_skip() -> Option<PathBuf> {
    let found = chromium_path();
    if found.is_none() {
        assert!(
            std::env::var_os("USIM_REQUIRE_CHROMIUM").is_none(),
            "USIM_REQUIRE_CHROMIUM is set but chromium is not installed"
        );
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: chromium is not installed (apt-get install -y chromium); \
             this browser test passes without running"
        );
    }
    found
}

/// Issue 20: names such as `__proto__`, a report at x = 1.7e308, bidi
/// controls and a fleet's own status do not break or fool the page, and
/// nothing is selected until the user selects it.
#[test]
fn hostile_names_and_values_do_not_break_the_page() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let v = view_util::standalone(&[]);
    let publisher = v.publisher();
    let report = |x: f64, y: f64| {
        format!(r#"{{"k":1,"t":1,"x":{x:e},"y":{y},"speed":1,"heading":45,"depth":0}}"#)
    };
    let keep_publishing = |p: &view_util::Publisher| {
        for (name, x) in [
            ("__proto__", 3.0),
            ("constructor", 6.0),
            ("toString", 9.0),
            ("far", 1.7e308),
            ("evil\u{202e}gnp.exe", 12.0),
            ("alpha", 0.0),
        ] {
            p.publish(&topic(name, "NODE_REPORT"), report(x, 2.0), false);
        }
        // A fleet's own status: a name with a status and never a report.
        p.publish(&topic("fleet", "status"), "online", true);
    };
    keep_publishing(&publisher);
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        let all_there = "['__proto__','constructor','toString','far','alpha','evil\\u202egnp.exe']\
             .every(n => window.usimView && window.usimView.vehicles.has(n))";
        let t0 = Instant::now();
        while !cdp.eval(all_there).await.as_bool().unwrap_or(false) {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the page did not list every name: {} errors {}",
                cdp.eval("JSON.stringify([...window.usimView.vehicles.keys()])")
                    .await,
                cdp.eval("JSON.stringify(window.usimView.errors)").await
            );
            keep_publishing(&publisher);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        // The page keeps drawing (the grid loop is bounded by pixels).
        let d0 = cdp.eval("window.usimView.draws").await.as_f64().unwrap();
        for _ in 0..10 {
            keep_publishing(&publisher);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Fit all takes the far vehicle into the view; still drawing (5
        // redraws, however long a loaded machine takes for them).
        cdp.click("#fit").await;
        let t1 = Instant::now();
        let mut d1 = cdp.eval("window.usimView.draws").await.as_f64().unwrap();
        while d1 - d0 < 5.0 && t1.elapsed() < Duration::from_secs(20) {
            keep_publishing(&publisher);
            tokio::time::sleep(Duration::from_millis(100)).await;
            d1 = cdp.eval("window.usimView.draws").await.as_f64().unwrap();
        }
        assert!(
            d1 - d0 >= 5.0,
            "the page stopped drawing: {d0} -> {d1} redraws"
        );
        assert_eq!(
            cdp.eval("JSON.stringify(window.usimView.errors)").await,
            json!("[]")
        );
        let cam = cdp
            .eval("[window.usimView.camera.cx, window.usimView.camera.scale]")
            .await;
        assert!(
            cam[0].as_f64().is_some_and(f64::is_finite) && cam[1].as_f64().is_some_and(|s| s > 0.0),
            "{cam}"
        );
        // Rows: one per vehicle, none for the fleet's status; the bidi
        // override is shown escaped.
        let rows = cdp
            .eval("[...document.querySelectorAll('#rows tr')].map(r => r.cells[0].textContent)")
            .await;
        let rows: Vec<String> = serde_json::from_value(rows).unwrap();
        assert_eq!(rows.len(), 6, "{rows:?}");
        assert!(
            !rows.contains(&"fleet".to_string()),
            "the fleet's status is listed: {rows:?}"
        );
        assert!(rows.contains(&"__proto__".to_string()), "{rows:?}");
        assert!(
            rows.contains(&"evil\\u{202e}gnp.exe".to_string()),
            "{rows:?}"
        );
        assert!(
            rows.iter().all(|r| !r.contains('\u{202e}')),
            "raw bidi control: {rows:?}"
        );
        // Nothing selected until the user selects.
        assert_eq!(cdp.eval("window.usimView.selected").await, json!(null));
        assert_eq!(
            cdp.eval("document.querySelectorAll('#rows tr.selected').length")
                .await,
            json!(0)
        );
        // `__proto__` is a vehicle like any other: select and command it.
        cdp.click("#rows tr[data-name=\"__proto__\"]").await;
        assert_eq!(
            cdp.eval("window.usimView.selected").await,
            json!("__proto__")
        );
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({})))
            .await;
    });
    let mut browser = browser;
    let _ = browser.proc.wait_exit(Duration::from_secs(10));
}

/// Issue 24: the command fields show the selected vehicle's setpoints
/// after a `usim post`, an edited field is marked until sent, each vehicle
/// has a clock and a measured time warp, a UUV is drawn as a UUV, trails
/// begin before the page opened, an off-screen vehicle gets an edge marker
/// that centres it, and there is a legend and layer switches.
#[test]
fn setpoints_clock_hulls_trails_and_edge_markers() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let v = view_util::standalone(&[]);
    let url = v.broker.url();
    let config = |name: &str, x: f64, kind: &str, length: f64| {
        let path = v.dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\nprefix = \"NAV\"\n\
                 start_pos = \"x={x}, y=0, heading=90, speed=0, depth=0\"\n\
                 app_tick = 10\nplatform_type = \"{kind}\"\nplatform_length = {length}\n\
                 [mqtt]\nbroker = \"{url}\"\ntopic_root = \"{}\"\n",
                mqtt_util::ROOT
            ),
        )
        .expect("write config");
        path
    };
    let alpha = config("alpha", 0.0, "kayak", 4.0);
    let uuv = config("deep", 400.0, "UUV", 3.0);
    let _a = mqtt_util::spawn_vehicle(&alpha, &["--time-warp", "4"]);
    let _u = mqtt_util::spawn_vehicle(&uuv, &[]);
    let watch = Watcher::new(
        v.broker.port,
        &[topic("alpha", "USM_TIME"), topic("alpha", "NODE_REPORT")],
    );
    // alpha runs for a while before the page opens: 8 s of its clock (2 s
    // of wall-clock time at warp 4 on an idle machine), and it is
    // subscribed before the command below is posted.
    watch.wait_clock("alpha", 0, 8.0);
    let post = |var: &str, value: &str| {
        let out = Command::new(mqtt_util::usim())
            .args([
                "post",
                "--broker",
                &url,
                "--topic-root",
                mqtt_util::ROOT,
                "alpha",
                var,
                value,
            ])
            .output()
            .expect("usim post");
        assert!(out.status.success(), "usim post: {out:?}");
    };
    post("DESIRED_THRUST", "100");
    assert!(
        watch
            .wait_after(
                0,
                &topic("alpha", "NODE_REPORT"),
                Duration::from_secs(15),
                |p| {
                    let r = node_report(p);
                    r["x"]
                        .as_f64()
                        .unwrap_or(0.0)
                        .hypot(r["y"].as_f64().unwrap_or(0.0))
                        > 8.0
                }
            )
            .is_some(),
        "alpha did not move away from its start"
    );
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        assert!(
            cdp.wait_true(
                "window.usimView && ['alpha','deep'].every(n => window.usimView.vehicles.has(n) && Number.isFinite(window.usimView.vehicles.get(n).x))",
                Duration::from_secs(20)
            )
            .await
        );
        // Trails older than the page: the first point is near the start (0, 0).
        let first = cdp.eval("window.usimView.vehicles.get('alpha').trail[0]").await;
        let (fx, fy) = (first[0].as_f64().unwrap(), first[1].as_f64().unwrap());
        assert!(fx.hypot(fy) < 3.0, "alpha's trail begins at ({fx}, {fy}), not near its start");

        // Setpoints: select alpha; the thrust field shows 100, then 60 after a post.
        cdp.click("#rows tr[data-name=\"alpha\"]").await;
        assert!(
            cdp.wait_true("document.getElementById('thrust').value === '100'", Duration::from_secs(20)).await,
            "thrust field shows {}",
            cdp.eval("document.getElementById('thrust').value").await
        );
        post("DESIRED_THRUST", "60");
        post("DESIRED_RUDDER", "20");
        assert!(
            cdp.wait_true(
                "document.getElementById('thrust').value === '60' && document.getElementById('rudder').value === '20'",
                Duration::from_secs(20)
            )
            .await,
            "fields show {} / {}",
            cdp.eval("document.getElementById('thrust').value").await,
            cdp.eval("document.getElementById('rudder').value").await
        );
        let row = cdp.eval("[...document.querySelector('#rows tr[data-name=\"alpha\"]').cells].map(c => c.textContent)").await;
        assert_eq!((row[10].as_str(), row[11].as_str()), (Some("60"), Some("20.0")), "{row}");
        // Edited but not sent: marked, and not overwritten by live values.
        cdp.type_into("#rudder", "-5").await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(cdp.eval("document.getElementById('rudder').className").await, json!("edited"));
        assert_eq!(cdp.eval("document.getElementById('rudder').value").await, json!("-5"));
        cdp.click("#send-rudder").await;
        assert!(cdp.wait_true("document.getElementById('rudder').className === ''", Duration::from_secs(20)).await);
        assert!(
            cdp.wait_true("document.getElementById('rudder').value === '-5'", Duration::from_secs(20)).await,
            "the sent rudder is not the live value"
        );

        // Clock and warp: within 2 s (page clock) of the latest USM_TIME;
        // the warp column near 4.
        let page_clock = cdp.eval("window.usimView.clockOf('alpha')").await.as_f64().expect("clock");
        let published = watch.latest_num(&topic("alpha", "USM_TIME")).expect("USM_TIME");
        assert!((page_clock - published).abs() < 8.0, "page clock {page_clock}, USM_TIME {published}");
        assert!(
            cdp.wait_true("Math.abs(window.usimView.vehicles.get('alpha').warp - 4) < 1.5", Duration::from_secs(20)).await,
            "warp {}",
            cdp.eval("window.usimView.vehicles.get('alpha').warp").await
        );
        let warp_cell = cdp.eval("document.querySelector('#rows tr[data-name=\"alpha\"]').cells[4].textContent").await;
        assert!(warp_cell.as_str().is_some_and(|t| t.ends_with('×')), "{warp_cell}");

        // The UUV's hull.
        assert_eq!(cdp.eval("window.usimView.vehicles.get('deep').platform_type").await, json!("uuv"));
        assert_eq!(cdp.eval("window.usimView.vehicles.get('deep').platform_length").await.as_f64(), Some(3.0));
        assert_eq!(cdp.eval("window.usimView.hullKind(window.usimView.vehicles.get('deep').platform_type)").await, json!("uuv"));

        // Edge marker: zoom on alpha; deep (400 m east) is off screen.
        cdp.eval("(() => { window.usimView.centreOn('alpha'); window.usimView.camera.scale = 20; return true; })()").await;
        assert!(
            cdp.wait_true("window.usimView.edgeMarkers.some(m => m.name === 'deep')", Duration::from_secs(20)).await,
            "no edge marker for deep: {}",
            cdp.eval("JSON.stringify(window.usimView.edgeMarkers)").await
        );
        let m = cdp
            .eval("(() => { const m = window.usimView.edgeMarkers.find(m => m.name === 'deep'); const c = document.getElementById('canvas').getBoundingClientRect(); return [c.left + m.x, c.top + m.y]; })()")
            .await;
        cdp.click_at(m[0].as_f64().unwrap(), m[1].as_f64().unwrap()).await;
        assert!(
            cdp.wait_true(
                "Math.abs(window.usimView.camera.cx - window.usimView.vehicles.get('deep').x) < 1 && window.usimView.selected === 'deep'",
                Duration::from_secs(20)
            )
            .await,
            "the click on the marker did not centre deep"
        );

        // Legend and layers.
        assert_eq!(cdp.eval("!!document.getElementById('legend')").await, json!(true));
        for layer in ["trails", "labels", "geometry", "grid"] {
            assert_eq!(cdp.eval(&format!("document.getElementById('{layer}').checked")).await, json!(true), "{layer}");
            cdp.click(&format!("#{layer}")).await;
            assert_eq!(cdp.eval(&format!("document.getElementById('{layer}').checked")).await, json!(false), "{layer}");
        }
        let d0 = cdp.eval("window.usimView.draws").await.as_f64().unwrap();
        assert!(
            cdp.wait_true(&format!("window.usimView.draws > {d0}"), Duration::from_secs(20)).await,
            "no draw after the layers changed"
        );
        assert_eq!(cdp.eval("JSON.stringify(window.usimView.errors)").await, json!("[]"));
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({}))).await;
    });
    let mut browser = browser;
    let _ = browser.proc.wait_exit(Duration::from_secs(10));
}

/// Issue 19 item 7: MOOS geometry postings (`VIEW_POINT`, `VIEW_POLYGON`,
/// `VIEW_SEGLIST`, `VIEW_CIRCLE`, `VIEW_MARKER`, `VIEW_ARROW`, pMarineViewer's
/// string forms) on `{root}/{NAME}/VIEW_*` are drawn, bounded per source,
/// erased with `active=false`, and their labels escaped.
#[test]
fn moos_geometry_is_drawn_bounded_and_erasable() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let v = view_util::standalone(&[]);
    let publisher = v.publisher();
    let post = |p: &view_util::Publisher| {
        p.publish(
            &topic("alpha", "NODE_REPORT"),
            r#"{"k":1,"t":1,"x":0,"y":0,"speed":0,"heading":0,"depth":0}"#,
            false,
        );
        p.publish(
            &topic("helm", "VIEW_POLYGON"),
            "pts={-40,-40:40,-40:40,40:-40,40},label=op_area,edge_color=red",
            true,
        );
        p.publish(
            &topic("helm", "VIEW_SEGLIST"),
            "pts={0,0:20,10:30,-5},label=wpts,edge_color=yellow",
            true,
        );
        p.publish(
            &topic("helm", "VIEW_CIRCLE"),
            "x=0,y=0,radius=15,label=c,edge_color=white",
            true,
        );
        p.publish(
            &topic("helm", "VIEW_MARKER"),
            "type=triangle,x=-20,y=20,label=buoy,color=orange",
            true,
        );
        p.publish(
            &topic("helm", "VIEW_ARROW"),
            "x=10,y=-20,angle=90,length=8,label=wind",
            true,
        );
        p.publish(
            &topic("helm", "VIEW_POINT"),
            "x=25,y=25,label=evil\u{202e}txt,vertex_color=lime",
            true,
        );
    };
    post(&publisher);
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        let t0 = Instant::now();
        while cdp.eval("window.usimView ? window.usimView.geometry.length : 0").await != json!(6) {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "shapes: {}",
                cdp.eval("JSON.stringify(window.usimView && window.usimView.geometry)").await
            );
            post(&publisher);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let kinds = cdp.eval("window.usimView.geometry.map(g => g.kind).sort()").await;
        assert_eq!(kinds, json!(["arrow", "circle", "marker", "point", "polygon", "seglist"]));
        let poly = cdp.eval("window.usimView.geometry.find(g => g.kind === 'polygon')").await;
        assert_eq!(poly["pts"], json!([[-40, -40], [40, -40], [40, 40], [-40, 40]]));
        assert_eq!(poly["label"], "op_area");
        // The point is drawn in its colour where it is (lime: 0, 255, 0).
        cdp.eval("(() => { window.usimView.camera.cx = 0; window.usimView.camera.cy = 0; window.usimView.camera.scale = 5; window.usimView.camera.fitted = true; return true; })()").await;
        // The pixel at the point, once the page has redrawn (a loaded
        // machine may take longer than a fixed pause).
        let pixel = "(() => { const [sx, sy] = window.usimView.worldToScreen(25, 25); const d = window.devicePixelRatio || 1; \
                     return [...document.getElementById('canvas').getContext('2d').getImageData(Math.round(sx * d), Math.round(sy * d), 1, 1).data]; })()";
        let lime = format!("JSON.stringify({pixel}) === '[0,255,0,255]'");
        let drawn = cdp.wait_true(&lime, Duration::from_secs(20)).await;
        assert!(drawn, "the point is not drawn lime: {}", cdp.eval(pixel).await);
        // The geometry layer switched off: not drawn.
        cdp.click("#geometry").await;
        let hidden = cdp.wait_true(&format!("!({lime})"), Duration::from_secs(20)).await;
        assert!(hidden, "hidden geometry still drawn: {}", cdp.eval(pixel).await);
        cdp.click("#geometry").await;

        // Bounded: 250 unlabelled points from one source keep 200.
        for i in 0..250 {
            publisher.publish(&topic("flood", "VIEW_POINT"), format!("x={i},y=1"), false);
        }
        assert!(
            cdp.wait_true("window.usimView.geometry.filter(g => g.source === 'flood').length === 200", Duration::from_secs(15)).await,
            "flood shapes: {}",
            cdp.eval("window.usimView.geometry.filter(g => g.source === 'flood').length").await
        );
        // Erased with active=false.
        publisher.publish(&topic("helm", "VIEW_POLYGON"), "pts={0,0:1,1:1,0},label=op_area,active=false", true);
        assert!(
            cdp.wait_true("!window.usimView.geometry.some(g => g.kind === 'polygon')", Duration::from_secs(20)).await,
            "the polygon was not erased"
        );
        assert_eq!(cdp.eval("JSON.stringify(window.usimView.errors)").await, json!("[]"));
        // Shapes are not vehicles.
        assert_eq!(cdp.eval("window.usimView.vehicles.has('helm')").await, json!(false));
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({}))).await;
    });
    let mut browser = browser;
    let _ = browser.proc.wait_exit(Duration::from_secs(10));
}

/// A vehicle that lives only in a MOOS community (a pymoos client posting
/// MOOS NODE_REPORTs to `usim moosdb`) shows on the page in headless
/// Chromium, through `usim moos-bridge` onto the view's broker (issue 19).
#[test]
fn a_vehicle_only_in_a_moos_community_shows_on_the_page() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    if !moos_util::have_pymoos("a_vehicle_only_in_a_moos_community_shows_on_the_page") {
        return;
    }
    let v = view_util::standalone(&[]);
    let (_db, port) = moos_util::moosdb(v.dir.path(), "page", &["--moos_community=henry"]);
    let mut cmd = Command::new(mqtt_util::usim());
    cmd.args([
        "moos-bridge",
        &format!("--moos_port={port}"),
        "--broker",
        &v.broker.url(),
        "--topic-root",
        mqtt_util::ROOT,
    ]);
    let bridge = Proc::spawn("moos-bridge", cmd, v.dir.path().join("bridge.log"));
    assert!(
        bridge.wait_log("mirroring community henry", Duration::from_secs(30)),
        "{}",
        bridge.log()
    );
    let out = v.dir.path().join("peer.json");
    let (p, o) = (port.to_string(), out.to_str().unwrap().to_string());
    let peer = std::thread::spawn(move || {
        moos_util::run_py(
            "moos_bridge_peer.py",
            &[&p, &o, "20"],
            Duration::from_secs(90),
        )
    });
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        let t0 = Instant::now();
        loop {
            let x = cdp
                .eval("window.usimView && window.usimView.vehicles.get('alpha') ? window.usimView.vehicles.get('alpha').x : null")
                .await;
            if x == json!(12.5) {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(40),
                "alpha not on the page (x = {x}); vehicles: {}; bridge:\n{}",
                cdp.eval("JSON.stringify(window.usimView && [...window.usimView.vehicles.keys()])").await,
                bridge.log()
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        let y = cdp.eval("window.usimView.vehicles.get('alpha').y").await;
        assert_eq!(y.as_f64(), Some(-30.0));
    });
    let r = peer.join().unwrap();
    moos_util::assert_py(&r, "moos_bridge_peer");
}

/// pMarineViewer's default view of a MOOS mission (issue 36 item 6), in
/// headless Chromium: `usim moosdb MISSION --mqtt` mirrors a community where
/// a pymoos client plays the vehicle (NODE_REPORT strings, the helm's
/// VIEW_POLYGON, the PID's DESIRED_THRUST/RUDDER), and `usim view MISSION`
/// (no extra flags): the polygon is drawn and the first view fits it; the
/// vehicle's thrust and rudder are the community's, its clock the
/// community's DB_TIME; the mission's `button_one = DEPLOY # DEPLOY=true …`
/// is a button whose click posts its postings, in order, into the
/// MOOSDB; and `usim post alpha DEPLOY true` is accepted without
/// `--no-check` (a MOOS community takes any variable).
#[test]
fn a_moos_missions_geometry_buttons_and_setpoints_show_as_in_pmarineviewer() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    if !moos_util::have_pymoos("a_moos_missions_geometry_buttons") {
        return;
    }
    let mdir = tempfile::tempdir().unwrap();
    let mission = mdir.path().join("alpha.moos");
    std::fs::write(
        &mission,
        "ServerHost = localhost\nServerPort = 9000\nCommunity = alpha\n\n\
         ProcessConfig = pMarineViewer\n{\n  AppTick = 4\n\
         button_one = DEPLOY # DEPLOY=true\n\
         button_one = MOOS_MANUAL_OVERRIDE=false # RETURN=false\n\
         button_two = RETURN # RETURN=true\n}\n",
    )
    .unwrap();
    let m = mission.to_str().unwrap();
    let v = view_util::standalone(&["--no-token", m]);
    let url = v.broker.url();
    let (_db, port) = moos_util::moosdb(
        v.dir.path(),
        "pmv",
        &[m, "--mqtt", &url, "--topic-root", mqtt_util::ROOT],
    );
    // The vehicle of the community, for 16 s.
    let out = v.dir.path().join("rec.json");
    let mut args: Vec<String> = vec![
        port.to_string(),
        out.to_str().unwrap().into(),
        "1".into(),
        "16".into(),
        "--register=DEPLOY".into(),
        "--register=MOOS_MANUAL_OVERRIDE".into(),
        "--register=RETURN".into(),
    ];
    for i in 0..32 {
        let t = i as f64 * 0.5;
        args.push(format!(
            "--post={t}:NODE_REPORT_LOCAL=NAME=alpha,X=12.5,Y=-30,SPD=1,HDG=90,DEP=0"
        ));
        args.push(format!("--post={t}:DESIRED_THRUST=35"));
        args.push(format!("--post={t}:DESIRED_RUDDER=-12"));
        if i % 4 == 0 {
            args.push(format!(
                "--post={t}:VIEW_POLYGON=pts={{-200,-200:200,-200:200,200:-200,200}},label=op_area"
            ));
        }
    }
    let peer = std::thread::spawn(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        moos_util::run_py("moos_record.py", &a, Duration::from_secs(90))
    });
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let post_ok = rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        let t0 = Instant::now();
        // alpha, its setpoints, the community clock and the polygon
        loop {
            let s = cdp
                .eval(
                    "(() => { const v = window.usimView && window.usimView.vehicles.get('alpha'); \
                     return v ? JSON.stringify({x: v.x, thrust: v.thrust, rudder: v.rudder, clock: v.clock, \
                     warp: v.warp, shapes: window.usimView.geometry.length}) : null; })()",
                )
                .await;
            if let Some(j) = s.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                if j["shapes"].as_u64() == Some(1) && j["warp"].as_f64().is_some() && j["thrust"] == json!(35) {
                    assert_eq!(j["x"], json!(12.5));
                    assert_eq!(j["rudder"], json!(-12));
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_secs_f64();
                    let clock = j["clock"].as_f64().unwrap();
                    assert!((clock - now).abs() < 10.0, "clock {clock} vs {now}");
                    let w = j["warp"].as_f64().unwrap();
                    assert!((w - 1.0).abs() < 0.5, "warp {w}");
                    break;
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(40),
                "no vehicle, setpoints, clock and polygon on the page: {s}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        // The first view fits the vehicle and the 400 m polygon.
        let fit = cdp
            .eval(
                "(() => { const u = window.usimView, c = document.getElementById('canvas'); \
                 const a = u.worldToScreen(-200, -200), b = u.worldToScreen(200, 200); \
                 return JSON.stringify({a, b, w: c.clientWidth, h: c.clientHeight, scale: u.camera.scale}); })()",
            )
            .await;
        let f: Value = serde_json::from_str(fit.as_str().unwrap()).unwrap();
        let (w, h) = (f["w"].as_f64().unwrap(), f["h"].as_f64().unwrap());
        for p in [&f["a"], &f["b"]] {
            let (x, y) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
            assert!((0.0..=w).contains(&x) && (0.0..=h).contains(&y), "polygon corner off screen: {f}");
        }
        let side = (f["b"][0].as_f64().unwrap() - f["a"][0].as_f64().unwrap()).abs();
        assert!(side > 0.5 * w.min(h), "the polygon fills the view: {f}");
        // The mission's buttons.
        let labels = cdp
            .eval("JSON.stringify(window.usimView.buttons.map((b) => b.label))")
            .await;
        assert_eq!(labels, json!("[\"DEPLOY\",\"RETURN\"]"));
        // `usim post` to the MOOS vehicle, without --no-check
        let post = Command::new(mqtt_util::usim())
            .args(["post", "alpha", "DEPLOY", "false", "--broker", &url, "--topic-root", mqtt_util::ROOT])
            .output()
            .unwrap();
        let ok = post.status.success();
        let err = String::from_utf8_lossy(&post.stderr).into_owned();
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Click DEPLOY.
        cdp.eval("document.getElementById('moos-button-0').click()").await;
        let t0 = Instant::now();
        loop {
            let r = cdp
                .eval("JSON.stringify(window.usimView.replies.slice(-1))")
                .await;
            if r.as_str().is_some_and(|s| s.contains("DEPLOY")) {
                assert!(r.as_str().unwrap().contains("\"ok\":true"), "{r}");
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(10), "no reply to the click: {r}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({}))).await;
        (ok, err)
    });
    assert!(
        post_ok.0,
        "usim post alpha DEPLOY false refused: {}",
        post_ok.1
    );
    let r = peer.join().unwrap();
    moos_util::assert_py(&r, "moos_record");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let got: Vec<(String, String)> = rec["mail"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            ["DEPLOY", "MOOS_MANUAL_OVERRIDE", "RETURN"].contains(&m["key"].as_str().unwrap())
        })
        .map(|m| {
            (
                m["key"].as_str().unwrap().to_string(),
                m["value"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("DEPLOY", "false"),
        ("DEPLOY", "true"),
        ("MOOS_MANUAL_OVERRIDE", "false"),
        ("RETURN", "false"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(
        got, want,
        "the post, then the button's postings in order, in the MOOSDB"
    );
    let mut browser = browser;
    let _ = browser.proc.wait_exit(Duration::from_secs(10));
}

/// Issue 40 item 6: a real vehicle with `[wind]`, `[sea]`, `[sensors]` and
/// `[obstacles]` (configs/kayak_sea_sensors.toml's tables, gusts off so the
/// wind speed is its mean) on a standalone `usim view`. The page draws the
/// wind arrow flying with the wind (bearing 60° + 180°), the sea legend
/// with the config's Hs, Tp and direction, the obstacle file's polygon with
/// its vertices, the sensed GPS fix off the true position (noise of 3 m),
/// "no fix" in a `USM_SENSOR gps=off` dropout and the fix back after
/// `gps=on`; driven north into the obstacle, the polygon is drawn hit (red
/// where it was white).
#[test]
fn wind_sea_obstacles_and_the_sensed_fix_are_drawn() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let v = view_util::standalone(&[]);
    let url = v.broker.url();
    std::fs::write(
        v.dir.path().join("obs.txt"),
        "// one box north of the start\npoly = pts={-20,15:20,15:20,25:-20,25},label=box\n",
    )
    .expect("write obstacles");
    let cfg = v.dir.path().join("alpha.toml");
    std::fs::write(
        &cfg,
        format!(
            "name = \"alpha\"\nprefix = \"NAV\"\n\
             start_pos = \"x=0, y=0, heading=0, speed=0, depth=0\"\n\
             app_tick = 10\nplatform_length = 3.0\nplatform_beam = 0.8\n\
             [mqtt]\nbroker = \"{url}\"\ntopic_root = \"{}\"\n\
             [sea]\nspectrum = \"jonswap\"\nhs = 1.5\ntp = 6.0\ndirection = 270\nspreading = 25\ncomponents = 32\nseed = 1\n\
             [wind]\nspeed = 8.0\ndirection = 60\ngusts = false\nwindage = 0\nweathervane = 0\n\
             [sensors]\nseed = 1\ngps_sigma = 3.0\n\
             [obstacles]\nfile = \"obs.txt\"\nhit_range = 1\nrefresh_interval = 1\n",
            mqtt_util::ROOT
        ),
    )
    .expect("write config");
    let _alpha = mqtt_util::spawn_vehicle(&cfg, &[]);
    let watch = Watcher::new(v.broker.port, &[topic("alpha", "NODE_REPORT")]);
    let publisher = v.publisher();
    let browser = Browser::launch(&chromium, v.dir.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut cdp = Cdp::connect(&browser.ws_url).await;
        cdp.open_page(&v.url).await;
        let env_ready = "window.usimView && window.usimView.env && window.usimView.env.arrow !== null && window.usimView.env.sea !== null";
        assert!(
            cdp.wait_true(env_ready, Duration::from_secs(30)).await,
            "no wind/sea drawn: {}",
            cdp.eval("JSON.stringify(window.usimView && window.usimView.env)").await
        );
        let env = cdp.eval("window.usimView.env").await;
        assert_eq!(env["vehicle"], "alpha");
        assert_eq!(env["wind_from"], json!(60));
        assert_eq!(env["wind_speed"], json!(8));
        let angle = env["angle"].as_f64().expect("arrow angle");
        assert!((angle - 240.0).abs() < 0.5, "the wind arrow points to {angle}°, not 240°");
        assert_eq!(env["sea"]["hs"], json!(1.5));
        assert_eq!(env["sea"]["tp"], json!(6));
        assert_eq!(env["sea"]["direction"], json!(270));
        let text = env["text"].to_string();
        assert!(
            text.contains("wind 8.0 m/s from 060°") && text.contains("sea Hs 1.50 m, Tp 6.0 s from 270°"),
            "{text}"
        );
        // The wave arrow flies with the waves: toward 090°, left to right.
        let sea = &env["sea"]["arrow"];
        assert!(sea["x1"].as_f64().unwrap() > sea["x0"].as_f64().unwrap() + 10.0, "{sea}");

        // The obstacle file's polygon, as the vehicle posts it (VIEW_POLYGON).
        assert!(
            cdp.wait_true("window.usimView.polygonsDrawn.some(p => p.label === 'box')", Duration::from_secs(20)).await,
            "no obstacle drawn: {}",
            cdp.eval("JSON.stringify(window.usimView.geometry)").await
        );
        let poly = cdp.eval("window.usimView.geometry.find(g => g.kind === 'polygon' && g.label === 'box')").await;
        assert_eq!(poly["pts"], json!([[-20, 15], [20, 15], [20, 25], [-20, 25]]));
        assert_eq!(poly["fill_color"], "white");
        assert_eq!(cdp.eval("window.usimView.polygonsDrawn.find(p => p.label === 'box').hit").await, json!(false));

        // The sensed fix: drawn, off the true position by the GPS noise.
        let sensed = "window.usimView.sensedDrawn.find(s => s.name === 'alpha')";
        assert!(cdp.wait_true(&format!("!!{sensed} && !{sensed}.lost"), Duration::from_secs(20)).await);
        let mut offsets = Vec::new();
        for _ in 0..10 {
            // [marker px off the fix's screen point, metres off the truth,
            //  px off the truth's screen point / (metres × px per metre)]
            let d = cdp
                .eval(&format!(
                    "(() => {{ const s = {sensed}, [sx, sy] = window.usimView.worldToScreen(s.x, s.y); \
                     const m = Math.hypot(s.x - s.tx, s.y - s.ty); \
                     return [Math.hypot(s.sx - sx, s.sy - sy), m, Math.hypot(s.sx - s.tsx, s.sy - s.tsy) / (m * window.usimView.camera.scale)]; }})()"
                ))
                .await;
            assert!(d[0].as_f64().unwrap() < 0.01, "the marker is not at the sensed fix: {d}");
            assert!((d[2].as_f64().unwrap() - 1.0).abs() < 0.01, "marker drawn off its offset: {d}");
            offsets.push(d[1].as_f64().unwrap());
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mean = offsets.iter().sum::<f64>() / offsets.len() as f64;
        // |error| of a 2-D Gaussian of σ = 3 m per axis: mean σ√(π/2) = 3.76 m
        assert!(mean > 0.3 && mean < 12.0, "sensed − true offsets {offsets:?}");
        assert!(offsets.iter().all(|d| *d > 0.0), "a sensed fix on the truth: {offsets:?}");

        // A GPS dropout: no fix drawn while the truth still is; then back.
        publisher.publish(&topic("alpha", "USM_SENSOR"), "gps=off", false);
        assert!(
            cdp.wait_true(&format!("!!{sensed} && {sensed}.lost"), Duration::from_secs(20)).await,
            "no dropout shown: {}",
            cdp.eval(&format!("JSON.stringify({sensed})")).await
        );
        assert_eq!(cdp.eval("Number.isFinite(window.usimView.vehicles.get('alpha').x)").await, json!(true));
        assert_eq!(cdp.eval("window.usimView.vehicles.get('alpha').sensed.fix").await, json!(0));
        publisher.publish(&topic("alpha", "USM_SENSOR"), "gps=on", false);
        assert!(cdp.wait_true(&format!("!!{sensed} && !{sensed}.lost"), Duration::from_secs(20)).await);

        // Fill before the hit: white at 0.15 over the sea (green ≥ red).
        cdp.eval("(() => { const c = window.usimView.camera; c.cx = 0; c.cy = 10; c.scale = 8; c.fitted = true; return true; })()").await;
        let pixel = "(() => { const [sx, sy] = window.usimView.worldToScreen(15, 22); const d = window.devicePixelRatio || 1; \
                     return [...document.getElementById('canvas').getContext('2d').getImageData(Math.round(sx * d), Math.round(sy * d), 1, 1).data]; })()";
        let white = format!("(() => {{ const p = {pixel}; return p[1] >= p[0] && p[0] > 200; }})()");
        assert!(cdp.wait_true(&white, Duration::from_secs(20)).await, "before the hit: {}", cdp.eval(pixel).await);
        // North into the box: OBSTACLE_HIT, and the polygon is drawn hit.
        publisher.publish(&topic("alpha", "DESIRED_THRUST"), "100", false);
        assert!(
            watch
                .wait_after(0, &topic("alpha", "NODE_REPORT"), Duration::from_secs(40), |p| {
                    node_report(p)["y"].as_f64().unwrap_or(0.0) > 13.0
                })
                .is_some(),
            "alpha did not reach the box"
        );
        assert!(
            cdp.wait_true("window.usimView.polygonsDrawn.some(p => p.label === 'box' && p.hit)", Duration::from_secs(20)).await,
            "the box is not drawn hit: {}",
            cdp.eval("JSON.stringify(window.usimView.polygonsDrawn)").await
        );
        let red = format!("(() => {{ const p = {pixel}; return p[0] > p[1] + 40; }})()");
        assert!(cdp.wait_true(&red, Duration::from_secs(20)).await, "after the hit: {}", cdp.eval(pixel).await);
        // The layers switch the new drawings off.
        cdp.click("#environment").await;
        assert!(cdp.wait_true("window.usimView.env === null", Duration::from_secs(10)).await);
        cdp.click("#sensors").await;
        assert!(cdp.wait_true("window.usimView.sensedDrawn.length === 0", Duration::from_secs(10)).await);
        assert_eq!(cdp.eval("JSON.stringify(window.usimView.errors)").await, json!("[]"));
        let _ = tokio::time::timeout(Duration::from_secs(5), cdp.call("Browser.close", json!({}))).await;
    });
    let mut browser = browser;
    let _ = browser.proc.wait_exit(Duration::from_secs(10));
}
