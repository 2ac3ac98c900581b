#!/usr/bin/env python3
"""Write the seed corpus of every fuzz target into fuzz/corpus/<target>/.

Small files: valid inputs from the project's examples and the hostile
cases of issue 13 (huge and tiny numbers, floods of timed commands,
control characters, odd files). Re-run after changing the seeds; the
files are named by content hash, so re-running adds nothing twice.
"""
import hashlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    (d / name).write_bytes(data)


# ---- message: first byte = vehicle kind, then VAR=payload lines ----------
msgs = [
    "DESIRED_THRUST=60\nDESIRED_RUDDER=20\nSTEP=1\nSTEP=1",
    "DESIRED_THRUST=0\nSET=[\"DESIRED_THRUST\",\"ClearAll\",[]]",
    "DESIRED_THRUST=50\nSTEP=1\nDESIRED_THRUST=0\nSET=[\"DESIRED_THRUST\",\"ClearAll\",[]]\nSTEP=1",
    "USM_RESET=x=1e10\nDESIRED_THRUST=100",
    "DRIFT_X=1e20\nDRIFT_Y=-1e20",
    "USM_RESET=speed=1e308",
    "USM_RESET=x=1e308,y=1e308\nDESIRED_THRUST=100\nSTEP=1",
    "USM_RESET=heading=-1e-14\nSTEP=0.1",
    "USM_RESET=heading=1e300,depth=-1e300",
    "USM_RESET=1e7,-1e7,359.99999999999994,100,12000",
    "DRIFT_VECTOR=90,99.9\nDRIFT_VECTOR_MULT=1e6\nDRIFT_VECTOR_ADD=0,1e300",
    "DRIFT_VECTOR=45,0.7\nDRIFT_VECTOR_ADD=225,0.7\nDRIFT_VECTOR_MULT=-1",
    "DESIRED_THRUST=1e300\nROTATE_SPEED=1e308\nSTEP=1e6",
    "DESIRED_RUDDER=-1e-320\nDESIRED_THRUST=5e-324\nSTEP=1e-300",
    "THRUST_MODE_DIFFERENTIAL=true\nDESIRED_THRUST_L=100\nDESIRED_THRUST_R=-100\nSTEP=10",
    "THRUST_MODE_REVERSE=true\nDESIRED_THRUST=-50\nDESIRED_RUDDER=30",
    "USM_SIM_PAUSED=true\nSTEP=100\nUSM_SIM_PAUSED=false\nSTEP=1",
    "USM_SIM_PAUSED=toggle\nUSM_ENABLED=false\nOBSTACLE_HIT=true",
    "BUOYANCY_RATE=100\nDESIRED_ELEVATOR=100\nSTEP=1000",
    "WATER_DEPTH=12000\nUSM_TURN_RADIUS=1e7\nUSM_TURN_RATE=1e300",
    "SET=[\"DESIRED_RUDDER\",\"Merge\",[[30,\"+1\"],[0,\"+2\"],[-30,\"+3\"]]]\nSTEP=0.5\nSTEP=0.5\nSTEP=3",
    "SET=[\"DESIRED_RUDDER\",\"Merge\",[[1e308,\"+1e300\"]]]",
    "SET=[\"DESIRED_THRUST\",\"ClearAfter\",[[10,1e12]]]\nSET=[\"DESIRED_THRUST\",\"ClearBefore\",[[10,-1e12]]]",
    "SET=" + "[" * 200 + "]" * 200,
    "SET=[\"DESIRED_RUDDER\",\"Merge\",[" + ",".join(f"[1,{1000+i}]" for i in range(300)) + "]]",
    "USM_RESET=x=\x1b]0;pwned\x07\nDESIRED_THRUST=\x1b[2J60",
    "DESIRED_THRUST=60\x00\nDESIRED_THRUST= 6e1 \nDESIRED_THRUST=+60",
    "CURRENT_X=0.5\nUSM_FORCE_Y=0.5\nUSM_FORCE_VECTOR=90,1\nUSM_FORCE_VECTOR_ADD=90,1",
    "STEP=inf\nSTEP=nan\nSTEP=-5\nSTEP=1e308",
    "OBSTACLE_HIT=1\nOBSTACLE_HIT=0\nOBSTACLE_HIT=nope",
    "DRIFT_X=100\nDRIFT_Y=100\nDRIFT_VECTOR_MULT=1.0000001",
    "USM_RESET=x=1,y=2,foo=3\nUSM_RESET=,,,,,,\nUSM_RESET=x==1",
]
for i, m in enumerate(msgs):
    for sel in (0, 7) if i % 2 == 0 else (3, 5):
        put("message", bytes([sel]) + m.encode())

# ---- set: SET payloads, one per line ---------------------------------------
sets = [
    '["DESIRED_RUDDER", "Merge", [[30.0, 12.0], [0.0, "+2.5", 0]]]',
    '["DESIRED_RUDDER", "ClearAll", []]',
    '["THRUSTERS", "Merge", [[50, "+1"], [0, "+2"]]]',
    '["DESIRED_THRUST", "ClearAfter", [[10, 5], [20, 1]]]',
    '["DESIRED_THRUST", "ClearBefore", [[10, 5], [20, 1]]]',
    '["DESIRED_RUDDER", "Merge", [[1e308, "+1e300"]]]',
    '["DESIRED_RUDDER", "Merge", [[-1.7976931348623157e308, 1e15], [1.7976931348623157e308, 1e15]]]',
    '["DESIRED_RUDDER", "Merge", [[1, "+-1"], [1, "++1"], [1, "+nan"], [1, "+inf"]]]',
    '["DESIRED_RUDDER", "Merge", [[1, 2, "x"]]]',
    '["DESIRED_RUDDER", "merge", []]',
    '["NOPE", "Merge", []]',
    '{"a": 1}',
    '[1, 2, 3]',
    '["DESIRED_RUDDER", "Merge", [[1e400, 1]]]',
    '["DESIRED_RUDDER", "Merge", [[1, 1e400]]]',
    '["DESIRED_RUDDER", "Merge", [[1, -9.3e12]], 4]',
    '[' * 300 + ']' * 300,
    '"\u001b]0;title\u0007"',
    '["DESIRED_RUDDER", "Merge", [' + ",".join(f"[{i%7},{i}]" for i in range(500)) + ']]',
    '["DESIRED_RUDDER", "Merge", [[5, 0.05], [5, 0.05], [6, 0.05]]]',
    "",
    "\n\n\n",
]
for s in sets:
    put("set", s)
put("set", "\n".join(sets[:6]))
put("set", "\n".join(sets[5:12]))
put("set", "\n".join(['["DESIRED_RUDDER", "Merge", [' + ",".join(f"[1,{j*40+i}]" for i in range(40)) + ']]' for j in range(30)] + ['["DESIRED_RUDDER", "ClearAll", []]']))

# ---- config: vehicle files -------------------------------------------------
for p in sorted((ROOT / "configs").glob("*.toml")):
    put("config", p.read_text().replace('current_field = "fields/bay.cfd"', ""))
cfgs = [
    'name = "a"\n',
    'name = "a b"\n',
    'name = "a\tb"\n',
    'name = "\u001b[31mred"\n',
    'name = ""\n',
    'name = "x/y"\n',
    'start_x = 1e308\nstart_y = 1e308\n',
    'start_pos = "x=1e10,y=0,heading=-1e-14"\n',
    'start_speed = 1e308\nmax_speed = 1e308\n',
    'thrust_map = "0:0, 20:1, 40:2, 100:1e308"\n',
    'thrust_map = ["1:2", 3]\n',
    'turn_rate = nan\nmax_acceleration = -inf\n',
    'drift_x = 1e20\ndrift_vector = "90,1e300"\n',
    'lat_origin = 89.99999\nlon_origin = 179.9999\ngeodesy = "utm"\nstart_x = 1e7\n',
    'lat_origin = 91\nlon_origin = 0\n',
    'model = "v22"\nturn_radius = 1e300\nmax_speed = 0\n',
    '[actuators.DESIRED_RUDDER]\ninterpolation = "jerk"\nmax_rate = 1e-300\nmax_accel = 1e300\nmax_jerk = 5e-324\n',
    '[actuators.DESIRED_THRUST]\nmax_pending = 0\n',
    '[actuators.DESIRED_THRUST]\nmax_pending = 99999999999\n',
    '[aliases]\nT = ["DESIRED_THRUST", "DESIRED_THRUST"]\nU = []\n',
    '[mqtt]\nbroker = "mqtt://h:1"\nmax_payload = 10\n',
    '[mqtt]\nmax_payload = -1\n',
    'app_tick = 1e-300\n',
    'name = "' + 'n' * 3000 + '"\n',
    'start_pos = "' + '1,' * 1000 + '"\n',
    'current_field = "/dev/zero"\n',
    'current_field = "."\n',
    '\x00\x01\x02',
    '[[[[',
    'a = [' * 100,
]
for c in cfgs:
    put("config", c)

# ---- mission ------------------------------------------------------------------
V = "[vehicle]\nname = \"m\"\n"
missions = [
    "[mission]\ndt = 0.1\nsteps = 10\n" + V + "[[post]]\nt = 1\nvar = \"DESIRED_THRUST\"\nvalue = 60\n",
    "[mission]\ndt_pattern = [0.001]\nduration = 1e8\n" + V,
    "[mission]\ndt_pattern = [1e-300]\nduration = 1e300\n" + V,
    "[mission]\ndt = 1e-300\nduration = 1e300\n" + V,
    "[mission]\ndt = 0.1\nsteps = 9223372036854775807\n" + V,
    "[mission]\ndt = 0.1\nsteps = -1\n" + V,
    "[mission]\ndt = 0.1\nsteps = 5\noutput_every = 0\n" + V,
    "[mission]\nsteps = 5\nvehicle = \"/dev/zero\"\n",
    "[mission]\nsteps = 5\nvehicle = \"../nope.toml\"\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = -1\nvar = \"DESIRED_THRUST\"\nvalue = 60\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 1e308\nvar = \"DESIRED_THRUST\"\nvalue = 1e308\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"USM_RESET\"\nvalue = \"x=1e308,y=1e308\"\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"SET\"\nvalue = '[\"DESIRED_RUDDER\",\"Merge\",[[30,\"+1\"]]]'\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"SET\"\nvalue = '[\"DESIRED_RUDDER\",\"Merge\",[[30,\"+x\"]]]'\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = \"" + "9" * 5000 + "\"\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"DESIRED_THRUST\"\nvalue = [1, 2]\n",
    "[mission]\nsteps = 5\n" + V + "[[post]]\nt = 0\nvar = \"\u001b[2J\"\nvalue = 1\n",
    "[mission]\nsteps = 50\n" + V + "".join(f"[[post]]\nt = {i*0.1}\nvar = \"DESIRED_RUDDER\"\nvalue = {i}\n" for i in range(40)),
    "[mission]\n",
    "",
    "[mission]\ndt = 0.1\ndt_pattern = [0.1]\nsteps = 1\n" + V,
    "[mission]\nduration = nan\n" + V,
]
for p in sorted((ROOT / "missions").glob("*.toml")):
    t = p.read_text()
    if 'vehicle = "' in t.split("[[post]]")[0]:
        continue
    put("mission", t)
for m in missions:
    put("mission", m)

# ---- current_field -----------------------------------------------------------
put("current_field", (ROOT / "configs" / "fields" / "bay.cfd").read_text())
fields = [
    "fieldname: f\nradius: 20\nx=0,y=0,mag=1,ang=90\n",
    "x=0,y=0,mag=1,ang=90\nx=10,y=0,xdot=0.5,ydot=-0.5\n",
    "radius: 0\nx=0,y=0,mag=1,ang=90\n",
    "radius: -5\nx=0,y=0,mag=1,ang=90\n",
    "radius: 1e308\nx=0,y=0,mag=1,ang=90\n",
    "radius: 1e-300\nx=0,y=0,mag=1,ang=90\n",
    "x=1e308,y=1e308,mag=1e308,ang=1e308\n",
    "x=0,y=0,mag=1,ang=90,mag=2\n",
    "xpos=5,ypos=5\n",
    "x=,y=\n",
    "x=0\n",
    "// only a comment\n",
    "",
    "\n\n\n",
    "fieldname:nospace\nx=0,y=0\n",
    "x=0,y=0,mag=\"1\",ang='90'\n",
    "x=0,y=0,mag=1e5,ang=-1e-14\n",
    "\u001b]0;x\u0007x=0,y=0\n",
    "".join(f"x={i},y={i},mag=0.1,ang={i*7}\n" for i in range(200)),
    "".join(f"x=0,y=0,mag=0.1,ang={i}\n" for i in range(200)),
    "radius: 1e-3\n" + "".join(f"x={i*1000},y={-i*1000},mag=0.1,ang=1\n" for i in range(100)),
    "x=0,y=0\r\nx=1,y=1\r\n",
    "X=0, Y=0, MAG=1, ANG=45\n",
    "x=0,y=0,mag=1,ang=90,xdot=1e308,ydot=1e308\n",
]
for f in fields:
    put("current_field", f)

# ---- profile_csv ------------------------------------------------------------
H = "p0,v0,a0,pf,vf,af,vmax,amax,jmax\n"
csvs = [
    H + "0,0,0,5.0625,0,0,10,4.5,6\n1,2,0,1,2,0,2,1,1\n",
    H + "0,0,0,1,0,0,1,1,1\n",
    H + "0,0,0,1e308,0,0,1e308,1e308,1e308\n",
    H + "0,0,0,1,0,0,1e-308,1e-308,1e-308\n",
    H + "0,0,0,1,0,0,0,1,1\n",
    H + "0,0,0,1,0,0,-1,1,1\n",
    H + "nan,0,0,1,0,0,1,1,1\n",
    H + "inf,0,0,1,0,0,1,1,1\n",
    H + "0,100,0,0,-100,0,1,1,1\n",
    H + "0,0,50,0,0,-50,1,1,1\n",
    H + "0,0,0,1,0,0,1,1\n",
    H + "0,0,0,1,0,0,1,1,1,extra\n",
    "p0,v0\n1,2\n",
    "",
    H,
    H + '"0","0","0","1","0","0","1","1","1"\n',
    H + "\u001b[2J,0,0,1,0,0,1,1,1\n",
    H + "0,0,0,1,0,0,1,1,1\n" * 20,
    "jmax,amax,vmax,af,vf,pf,a0,v0,p0\n6,4.5,10,0,0,5.0625,0,0,0\n",
    H + "1e-320,1e-320,1e-320,2e-320,0,0,1,1,1\n",
    H + "0,0,0,1e15,0,0,1e-5,1e5,1e-5\n",
    H + "-5,3,-2,7,-1,0.5,4,3,2\n",
]
for c in csvs:
    put("profile_csv", c)

# ---- config: V22 keys (PID, sailing, wormholes) --------------------------
for f in ["v22_pid_boat.toml", "v22_pid_uuv.toml"]:
    src = ROOT / "configs" / f
    if src.exists():
        put("config", src.read_bytes())
v22_configs = [
    'model = "v22"\nyaw_pid_kp = "abc"\nspeed_pid_kp = 1e308\nmaxrudder = -1e308\ndepth_control = false\n',
    'model = "v22"\nyaw_pid_ki_limit = 1\nyaw_pid_integral_limit = 2\nsim_instability = 1e308\ntardy_helm_threshold = -5\n',
    'model = "v22"\ndepth_control = "maybe"\n',
    'model = "v22"\nwind_conditions = "spd=1e300,dir=1e300"\npolar_plot = ["0,0:90,1e300", "180,-5"]\nthrust_map = "0:0,100:5"\n',
    'model = "v22"\nwormhole = ["tag=a, madrid_poly={-1e300,-1e300:1e300,-1e300:1e300,1e300}, weber_poly={0,0:1,0:1,1}, connection=from_madrid"]\n',
    'model = "v22"\nturn_radius = 1e308\nmax_speed = 1e-320\npost_des_thrust = "DESIRED_THRUST"\npost_des_rudder = "a/b"\n',
    'model = "classic"\nyaw_pid_kp = 1\nwormhole = "tag=a"\n',
]
for c in v22_configs:
    put("config", c)

# ---- run_csv: a run CSV for `usim plot` ----------------------------------
RH = "k,t,x,y,speed,heading,depth,rudder,thrust,elevator"
golden = ROOT / "tests" / "golden" / "01_straight_accel_decel.classic.csv"
if golden.exists():
    put("run_csv", "\n".join(golden.read_text().splitlines()[:40]) + "\n")
runs = [
    RH + "\n0,0,0,0,0,0,0,0,0,0\n1,0.1,0,0.1,1,0,0,0,50,0\n",
    "vehicle," + RH + "\na,0,0,0,0,0,0,0,0,0,0\nb,0,0,5,5,1,90,0,10,50,0\na,1,0.1,1,1,1,0,0,0,0,0\n",
    RH + ",extra,lat\n0,0,0,0,0,0,0,0,0,0,x,42\n",
    RH + "\n0,0,nan,nan,nan,nan,nan,nan,nan,nan\n",
    RH + "\n0,0,1e308,-1e308,1e308,1e308,1e308,1e308,1e308,1e308\n1,1,-1e308,1e308,0,0,0,0,0,0\n",
    RH + "\n0,0,inf,0,0,0,0,0,0,0\n",
    RH + "\n0,0,5e-324,0,0,0,0,0,0,0\n0,0,5e-324,0,0,0,0,0,0,0\n",
    RH + "\n0,0,0,0\n",
    RH.replace("speed,", "") + "\n0,0,0,0,0,0,0,0,0\n",
    RH + "\n",
    "",
    "\ufeff" + RH + "\r\n0,0,0,0,0,0,0,0,0,0\r\n",
    "vehicle," + RH + "\n\"a,b\",0,0,0,0,0,0,0,0,0,0\n\u001b[2J,0,0,0,0,0,0,0,0,0,0\n",
    RH + "\n" + "".join(f"{i},{i*0.1},{i},{-i},1,{i*7%360},0,0,0,0\n" for i in range(300)),
    "vehicle," + RH + "\n" + "".join(f"v{i},0,0,0,0,0,0,0,0,0,0\n" for i in range(100)),
    RH + "\n0,-1,0,0,0,0,0,0,0,0\n1,-2,0,0,0,0,0,0,0,0\n",
]
for c in runs:
    put("run_csv", c)

# ---- view_client: WebSocket text messages from the view page ---------------
clients = [
    '{"type":"command","id":7,"vehicle":"alpha","var":"DESIRED_THRUST","value":60}',
    '{"type":"command","id":1,"vehicle":"alpha","var":"DESIRED_RUDDER","value":"-20"}',
    '{"type":"command","id":1,"vehicle":"alpha","var":"DESIRED_THRUST","value":1e999}',
    '{"type":"command","id":1,"vehicle":"alpha","var":"DESIRED_THRUST","value":"nan"}',
    '{"type":"command","id":-1,"vehicle":"a/b","var":"DESIRED_THRUST","value":1}',
    '{"type":"command","id":18446744073709551616,"vehicle":"#","var":"+","value":1}',
    '{"type":"command","id":2,"vehicle":"alpha","var":"NOT_A_VAR","value":1}',
    '{"type":"command","id":2,"vehicle":"","var":"","value":""}',
    '{"type":"subscribe"}',
    '[1,2,3]',
    '"command"',
    'null',
    '',
    '{' * 300 + '}' * 300,
    '{"type":"command","id":3,"vehicle":"alpha","var":"SET","value":"[\\"DESIRED_RUDDER\\",\\"Merge\\",[[1,2]]]"}',
    '{"type":"command","id":3,"vehicle":"alpha\u001b[2J","var":"DESIRED_THRUST","value":"6\u00000"}',
    '{"type":"command","id":3,"vehicle":"' + "a" * 5000 + '","var":"DESIRED_THRUST","value":1}',
    '{"type":"command","id":4,"vehicle":"alpha","var":"DESIRED_THRUST","value":{"x":1}}',
]
for c in clients:
    put("view_client", c)

# ---- node_report: NODE_REPORT payloads as usim view reads them ------------
reports = [
    '{"k":1,"t":0.1,"x":0,"y":0,"heading":45,"speed":1,"depth":0}',
    '{"k":1,"t":0.1,"x":1,"y":2,"lat":42.3,"lon":-71.1,"current_x":0.1,"current_y":null}',
    '{"x":1e999}',
    '{"x":"1"}',
    '{"x":NaN}',
    '{"x":-1e308,"y":1e308,"heading":1e308}',
    '[{"x":1}]',
    '{}',
    'null',
    '',
    '{"k":1,"k":2}',
    '{"x":1,"unknown":[1,2,{"a":null}]}',
    '{"x":' + '[' * 200 + ']' * 200 + '}',
    '  \n {"t":5e-324}',
    '{"t":1}garbage',
]
for c in reports:
    put("node_report", c)

# ---- moos_import: .moos files ---------------------------------------------
for f in ["classic.moos", "v22.moos", "v22_pid_alias.moos", "aliases.moos"]:
    src = ROOT / "tests" / "data" / "import" / f
    if src.exists():
        put("moos_import", src.read_bytes())
mooses = [
    "ProcessConfig = uSimMarineV22\n{\nyaw_pid_kp = 1\nspeed_pid_kp = 1\nmaxthrust = abc\n}\n",
    "ProcessConfig = uSimMarineV22\n{\nspeed_pid_kp = 1\n}\n",
    "ProcessConfig = uSimMarineV22\n{\nyaw_pid_kp=\ndepth_control = maybe\n}\n",
    "ProcessConfig = uSimMarineV22 {\nwormhole = tag=a,madrid_poly={0,0:1,0:1,1},weber_poly={5,5:6,5:6,6}\nwormhole = tag=\n}\n",
    "ProcessConfig = uSimMarineV22\n{\npolar_plot = 0,0:90,100\npolar_plot = 90,50\nwind_conditions = spd=1e308,dir=-1\n}\n",
    "ProcessConfig = uSimMarine\n{\nstart_x = 1" + "0" * 400 + "\nturn_rate = -5\n}\n",
    "ProcessConfig = uSimMarine\n{\nthrust_map = \"\\\npost_des_thrust = DESIRED_THRUST\n}\n",
    "ProcessConfig = uSimMarineV22\n{\npost_des_thrust = DESIRED_THRUST\npost_des_rudder = a/b#\n}\n",
    "LatOrigin = 91\nLongOrigin = 1000\nCommunity = a b/c\nProcessConfig = uSimMarine\n{\n}\n",
    "ProcessConfig = uSimMarine\n{\nprefix = \u001b[2J\nstart_pos = x=\"1\n}\n",
    "ProcessConfig = uSimMarineV22\n{\n" + "yaw_pid_kp = 1\n" * 500 + "}\n",
    "}\n{\nProcessConfig\nProcessConfig = = {\n",
    "ProcessConfig = uSimMarine\n{\nstart_x = 1\n",
    "\xff\xfe",
]
for c in mooses:
    put("moos_import", c)

# ---- v22_strings: W wind / P polar plot / H wormhole lines ----------------
v22s = [
    "W spd=5,dir=90\nP 0,0: 45,50: 90,100: 180,80",
    "W spd=5,dir=90\nP 0,0: 45,50: 90,100\nP 180,80\nP 90,10",
    "W spd=-1,dir=90\nW spd=1,dir=-5\nW spd=1,foo=2\nW spd=x",
    "W spd=1" + "0" * 400 + ",dir=1" + "0" * 400,
    "P 0,1" + "0" * 400 + ": 180,-1" + "0" * 400 + "\nW spd=1" + "0" * 300 + ",dir=0",
    "P 181,0\nP -1,0\nP 0,0:0,1\nP a,b\nP ,:,",
    "H tag=w1, madrid_poly={0,0:10,0:10,10:0,10}, weber_poly={100,0:110,0:110,10:100,10}, connection=from_madrid",
    "H tag=w1, madrid_poly={0,0:10,0:10,10:0,10}, weber_poly={100,0:110,0:110,10:100,10}, connection=from_weber\nH tag=w1, connection=both",
    "H madrid_poly={0,0:10,0:5,5:10,10:0,10}\nH tag=x, madrid_poly={0,0}",
    "H tag=a, madrid_poly={1" + "0" * 400 + ",0:0,1" + "0" * 400 + ":-1" + "0" * 400 + ",0}, weber_poly={0,0:1,0:1,1}, connection=from_madrid",
    "H tag=a, madrid_poly={0,0:1,0:1,1}, weber_poly={1e308,0:0,1e308:-1e308,0}, connection=from_madrid, delay=-1, id_change=maybe",
    "H tag=a, madrid_poly={{{}}}, weber_poly=}{",
    "H " + "tag=t,madrid_poly={0,0:1,0:1,1}," * 200,
    "spd=5,dir=90\n0,0:90,100\ntag=a",
    "W \u001b[2J\nP \x00\nH \x00=\x00",
    "W spd=5,dir=359.9\nP 0,0:180,100",
]
for c in v22s:
    put("v22_strings", c)

# ---- sweep: a sweep file; first line also a --shard; "---" splits merge parts
crossing = (ROOT / "missions/sweeps/crossing.toml").read_text()
sweeps = [
    crossing,
    "0/4\n" + crossing,
    "3/4\n[sweep]\nmission = \"m.toml\"\nruns = 10\n",
    "[sweep]\nmission = \"m.toml\"\nseed = -1\nruns = 10\n",
    "[sweep]\nmission = \"m.toml\"\nruns = 0\n[[var]]\nname = \"a\"\nkind = \"uniform\"\ntarget = \"post.1.t\"\nmin = 5.0\nmax = 1.0\n",
    "[sweep]\nmission = \"m.toml\"\nruns = 1000000000000\n[[var]]\nname = \"g\"\nkind = \"grid\"\ntarget = \"post.1.value\"\nvalues = []\n",
    "[sweep]\nmission = \"m.toml\"\n[[var]]\nname = \"p\"\nkind = \"polygon\"\ntarget = \"v.start\"\npoints = [[0.0, 0.0], [1.0, 1.0]]\n",
    "[sweep]\nmission = \"m.toml\"\n[[var]]\nname = \"n\"\nkind = \"normal\"\ntarget = \"post.1.value\"\nmean = 1e308\nstd = 1e308\n",
    "18446744073709551615/18446744073709551615\n",
    "0/0\n",
    "5/3\n",
    " 1 / 2 \nrun,x\n0,1\n---\nrun,x\n1,2\n",
    "run,x\n0,1\n---\nrun,y\n1,2\n",
    "run,x\n0,1\n0,1\n---\nrun,x\n",
    "run,x\n18446744073709551615,1\n---\n",
    "---\n---\n\n",
    "\x1b[2J[sweep]\x00\n",
]
for c in sweeps:
    put("sweep", c)

# ---- ros2_cdr / ros2_command: ROS 2 CDR (XCDR1; header 00 01 00 00) ------
import struct


class Cdr:
    """A tiny CDR little-endian writer for the seeds (alignment from the body start)."""

    def __init__(self):
        self.b = bytearray()

    def al(self, n):
        self.b += b"\0" * ((n - len(self.b) % n) % n)

    def f64(self, *v):
        for x in v:
            self.al(8)
            self.b += struct.pack("<d", x)
        return self

    def i32(self, v):
        self.al(4)
        self.b += struct.pack("<i", v)
        return self

    def u32(self, v):
        self.al(4)
        self.b += struct.pack("<I", v)
        return self

    def s(self, text):
        raw = text.encode()
        self.u32(len(raw) + 1)
        self.b += raw + b"\0"
        return self

    def u8(self, v):
        self.b += bytes([v & 0xFF])
        return self

    def u16(self, v):
        self.al(2)
        self.b += struct.pack("<H", v)
        return self

    def msg(self):
        return b"\0\x01\0\0" + bytes(self.b)


def header(c, sec=1, ns=2, frame="alpha/odom"):
    return c.i32(sec).u32(ns).s(frame)


odom = header(Cdr()).s("alpha/base_link").f64(1, 2, -3, 0, 0, 0.7, 0.7).f64(*[0.0] * 36)
odom = odom.f64(1, 0, 0, 0, 0, -0.1).f64(*[0.0] * 36).msg()
fix = header(Cdr(), frame="alpha/base_link").u8(0).u16(1).f64(43.8, -70.3, 0).f64(*[0.0] * 9).u8(0).msg()
pose = header(Cdr(), frame="map").f64(1, 2, 3, 0, 0, 0, 1).msg()
ts = header(Cdr(), frame="map").s("alpha/odom").f64(0, 0, 0, 0, 0, 0, 1).msg()
tf2 = Cdr().u32(2)
for child in ["alpha/odom", "alpha/base_link"]:
    header(tf2, frame="map").s(child).f64(1, 2, 3, 0, 0, 0, 1)
tf2 = tf2.msg()
msgs_cdr = [
    (0, Cdr().f64(12.5).msg()),
    (0, Cdr().f64(float("nan")).msg()),
    (0, Cdr().f64(float("inf")).msg() + b"\0\0\0"),
    (0, Cdr().f64(1.0).msg() + b"\0" * 9),
    (1, Cdr().s("x=10,y=-20").msg()),
    (1, Cdr().u32(0).msg()),
    (1, Cdr().u32(0xFFFFFFFF).msg()),
    (1, b"\0\x01\0\0" + struct.pack("<I", 4) + b"ab\0\0"),
    (1, b"\0\x01\0\0" + struct.pack("<I", 3) + b"\xff\xfe\0"),
    (2, odom),
    (2, odom[: len(odom) // 2]),
    (3, fix),
    (4, pose),
    (5, ts),
    (6, tf2),
    (6, Cdr().u32(1 << 30).msg()),
    (6, Cdr().u32(300).msg() + b"\0" * 64),
    (7, Cdr().i32(-5).u32(2000000000).msg()),
    (8, Cdr().i32(2147483647).u32(999999999).msg()),
    (9, b"\0\x00\0\0" + struct.pack(">d", 1.5)),
    (9, b"\0\x07\0\0" + b"\0" * 8),
    (9, b""),
    (0x10, struct.pack("<d", 3.25)),
    (0x30, struct.pack(">d", 3.25)),
    (0x11, struct.pack("<I", 3) + b"hi\0"),
]
for sel, body in msgs_cdr:
    put("ros2_cdr", bytes([sel]) + body)


def rec(var_index, body, big=False):
    return bytes([var_index | (0x80 if big else 0), len(body)]) + body


subs = [ln.split('"')[1] for ln in (ROOT / "src/command.rs").read_text().split("pub const SUBSCRIPTIONS")[1].split("];")[0].splitlines() if ln.strip().startswith('("') or ln.strip().startswith('"')]
ix = {v: i for i, v in enumerate(subs)}
f64b = lambda x: struct.pack("<d", x)  # noqa: E731
strb = lambda t: Cdr().s(t).b  # noqa: E731
cmds = [
    rec(ix["DESIRED_THRUST"], f64b(60)) + rec(ix["DESIRED_RUDDER"], f64b(20)),
    rec(ix["DESIRED_THRUST"], f64b(float("nan"))) + rec(ix["DESIRED_RUDDER"], f64b(float("-inf"))),
    rec(ix["DESIRED_THRUST"], f64b(1e308)) + rec(ix["DESIRED_RUDDER"], f64b(-1e308)),
    rec(ix["DESIRED_THRUST"], struct.pack(">d", 50), big=True),
    rec(ix["USM_RESET"], strb("x=10,y=-20,heading=45")),
    rec(ix["USM_RESET"], strb("x=1e308,y=nan")),
    rec(ix["DRIFT_VECTOR_ADD"], strb("90,1e300")),
    rec(ix["SET"], strb('["DESIRED_THRUST","ClearAll",[]]')),
    rec(ix["SET"], strb("[" * 60)),
    rec(ix["USM_RESET"], f64b(1.0)),
    rec(ix["DESIRED_RUDDER"], strb("12")),
    rec(ix["DESIRED_RUDDER"], b"\1\2\3"),
    rec(ix["DESIRED_RUDDER"], b""),
    rec(120, f64b(1.0)),
    rec(ix["DESIRED_HEADING"], f64b(400)) + rec(ix["DESIRED_SPEED"], f64b(-3)),
    b"".join(rec(ix["DESIRED_RUDDER"], f64b(float(i))) for i in range(40)),
]
for c in cmds:
    put("ros2_command", c)

# ---- moos_bridge: records sep 0xff 0xfe; byte 0 = kind | source bits ----
# kind 0 MOOS string, 1 MOOS double, 2 MQTT message, 3 tick; 4 = own, 8 = from MQTT
def br(kind, key=b"", value=b""):
    return bytes([kind]) + key + b"\0" + value


def brs(*recs):
    return b"\xff\xfe".join(recs)


bridge = [
    br(0, b"NODE_REPORT_LOCAL", b"NAME=alpha,X=1,Y=2,SPD=1.5,HDG=90,LAT=43.8,LON=-70.3,TIME=5"),
    brs(br(1, b"NAV_SPEED", f64b(2.0)), br(0, b"NODE_REPORT", b"NAME=alpha,X=1,Y=2"), b"\x03\x0b", b"\x03\x0b"),
    brs(br(0, b"DEPLOY", b"true"), br(2, b"DEPLOY", b"true"), br(2, b"DEPLOY", b"false"), br(8, b"DEPLOY", b"x")),
    brs(*(br(0, k, b"v") for k in [b"A\x1bB", b"A\x00", "A\u0085".encode(), "A\ufffe".encode(), b"A+", b"A#", b"", b"A\x7f"])),
    brs(br(1, b"NAV_X", f64b(float("nan"))), br(2, b"NAV_X", b"inf"), br(2, b"NAV_X", b"1e309"), br(2, b"NAV_X", b"7" * 70000)),
    br(0, b"BIG", b"x" * 66000),
    br(0, b"DB_CLIENTS", b"a" * 70000 + b",b"),
    brs(br(0, b"NODE_REPORT", b"NAME=a/b,X=1,Y=1"), br(0, b"NODE_REPORT", b"NAME=ok,X=1e308,Y=-1e308,SPD=nan,HDG=inf,TIME=1e300"), br(4, b"NAV_X", b"")),
    brs(*(br(0, b"NODE_REPORT", b"NAME=v%d,X=1,Y=1" % i) for i in range(50)), b"\x03\xff", br(0, b"NODE_REPORT", b"NAME=v1,X=1,Y=1")),
    brs(br(1, b"NAV_HEADING_OVER_GROUND", f64b(45.0)), br(1, b"NAV_SPEED_OVER_GROUND", f64b(1e308)), br(0, b"NODE_REPORT_LOCAL", b"NAME=alpha,x=1,y=2,NAME=beta,X=3")),
    brs(br(2, "A\u001b".encode(), b"1"), br(2, b"../alpha/DEPLOY", b"1"), br(2, b"DEPLOY/x", b"1"), br(1, b"DEPLOY", f64b(1.0)), br(2, b"DEPLOY", b"nan")),
    brs(br(12, b"DEPLOY", b"true"), br(4, b"NODE_REPORT", b"NAME=alpha,X=1,Y=1"), br(8, b"NODE_REPORT", b"NAME=alpha,X=1,Y=1")),
    br(0, b"NODE_REPORT", b"," * 5000 + b"NAME=z,X=1,Y=1"),
]
for b_ in bridge:
    put("moos_bridge", b_)

for t in sorted(CORPUS.iterdir()):
    print(t.name, len(list(t.iterdir())))
