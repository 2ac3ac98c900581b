#!/usr/bin/env python3
"""Oracle for usim's UTM conversion (src/model/geodesy.rs, docs/model.md §18).

Reproduces MOOSGeodesy (PROJ backend) with pyproj: the origin's zone by the
LLtoUTM rules, +south if lat0 < 0, E0/N0 = forward of (lat0, lon0)*deg2rad,
lat/lon = inverse of (x+E0, y+N0) times rad2deg, with PI = 3.14159265.

Usage:
  scripts/check_utm_pyproj.py origin LAT0 LON0            # print zone, E0, N0
  scripts/check_utm_pyproj.py point LAT0 LON0 X Y         # print lat, lon
  scripts/check_utm_pyproj.py random N SEED > cases.csv   # random cases
Needs: pip install pyproj
"""
import math
import random
import sys

from pyproj import Transformer

MOOS_PI = 3.14159265
DEG2RAD = MOOS_PI / 180
RAD2DEG = 180.0 / MOOS_PI


def utm_zone(lat, lon):
    lon_t = (lon + 180) - int((lon + 180) / 360) * 360 - 180
    zone = int((lon_t + 180) / 6) + 1
    if 56.0 <= lat < 64.0 and 3.0 <= lon_t < 12.0:
        zone = 32
    if 72.0 <= lat < 84.0:
        if 0.0 <= lon_t < 9.0:
            zone = 31
        elif 9.0 <= lon_t < 21.0:
            zone = 33
        elif 21.0 <= lon_t < 33.0:
            zone = 35
        elif 33.0 <= lon_t < 42.0:
            zone = 37
    return zone


_cache = {}


def transformers(lat0, lon0):
    zone = utm_zone(lat0, lon0)
    south = lat0 < 0
    key = (zone, south)
    if key not in _cache:
        utm = "+proj=utm +ellps=WGS84 +zone=%d%s" % (zone, " +south" if south else "")
        ll = "+proj=longlat +ellps=WGS84"
        _cache[key] = (
            Transformer.from_crs(ll, utm, always_xy=True),
            Transformer.from_crs(utm, ll, always_xy=True),
        )
    return zone, south, _cache[key]


def origin(lat0, lon0):
    zone, south, (fwd, _) = transformers(lat0, lon0)
    # MOOS passes lat*deg2rad radians to PROJ; in true degrees that is:
    e0, n0 = fwd.transform(math.degrees(lon0 * DEG2RAD), math.degrees(lat0 * DEG2RAD))
    return zone, south, e0, n0


def to_lat_lon(lat0, lon0, x, y):
    _, _, (_, inv) = transformers(lat0, lon0)
    _, _, e0, n0 = origin(lat0, lon0)
    lon, lat = inv.transform(x + e0, y + n0)
    # PROJ returns radians to MOOS, which multiplies by rad2deg.
    return math.radians(lat) * RAD2DEG, math.radians(lon) * RAD2DEG


def main(argv):
    if len(argv) >= 4 and argv[1] == "origin":
        print("%d %s %r %r" % origin(float(argv[2]), float(argv[3])))
    elif len(argv) >= 6 and argv[1] == "point":
        lat, lon = to_lat_lon(*(float(a) for a in argv[2:6]))
        print("%r %r" % (lat, lon))
    elif len(argv) >= 4 and argv[1] == "random":
        rng = random.Random(int(argv[3]))
        print("lat0,lon0,x,y,lat,lon")
        n = int(argv[2])
        i = 0
        while i < n:
            lat0 = rng.uniform(-80, 84)
            lon0 = rng.uniform(-180, 180)
            r = rng.choice([1e3, 1e4, 1e5, 4e5, 8e5])
            x = rng.uniform(-r, r)
            y = rng.uniform(-r, r)
            lat, lon = to_lat_lon(lat0, lon0, x, y)
            if not (math.isfinite(lat) and math.isfinite(lon)):
                continue
            print("%r,%r,%r,%r,%r,%r" % (lat0, lon0, x, y, lat, lon))
            i += 1
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
