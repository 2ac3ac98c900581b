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

for t in sorted(CORPUS.iterdir()):
    print(t.name, len(list(t.iterdir())))
