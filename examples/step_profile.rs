use usim::command::parse_text;
use usim::model::Vehicle;
fn main() {
    let cfg = usim::config::load_vehicle(std::path::Path::new("configs/kayak.toml")).unwrap();
    let mut v = Vehicle::new(&cfg, 0.0);
    v.handle_command(parse_text("DESIRED_THRUST", "80").unwrap(), 0.0)
        .unwrap();
    v.handle_command(parse_text("DESIRED_RUDDER", "20").unwrap(), 0.0)
        .unwrap();
    v.handle_command(parse_text("DRIFT_VECTOR", "45, 0.2").unwrap(), 0.0)
        .unwrap();
    let mut s = 0.0;
    for k in 1..=200_000u64 {
        v.step(k as f64 * 0.1);
        s += v.nav().x;
    }
    println!("{s}");
}
