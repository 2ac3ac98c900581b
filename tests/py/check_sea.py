"""Oracle for usim's sea and wind (tests/environment.rs): reads records
written by `usim env` and checks them with scipy (Welch) and wavespectra.

  check_sea.py sea CSV SPECTRUM HS TP GAMMA DIRECTION SPREADING
  check_sea.py wind CSV SPEED KAPPA LENGTH_SCALE N_COMPONENTS

Prints one line of results and exits 1 (with the reason) on a miss.
"""
import sys

import numpy as np
import scipy.signal as ss
import xarray as xr
import wavespectra  # noqa: F401  (registers the .spec accessor)
from wavespectra.construct import frequency, direction


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load(path):
    cols = np.genfromtxt(path, delimiter=",", names=True)
    return cols


def sea(path, spectrum, hs, tp, gamma, mean_dir, spread):
    c = load(path)
    t, eta, sx, sy = c["t"], c["elevation"], c["slope_x"], c["slope_y"]
    fs = 1.0 / (t[1] - t[0])
    n = len(eta)
    # Welch with one boxcar segment over the whole record: the record is a
    # whole number of the sea's periods 1/df (docs/model.md §24.1), so every
    # component falls on its own frequency bin (a tapered window would mix
    # neighbouring components, whose phases are random)
    f, p = ss.welch(eta, fs=fs, window="boxcar", nperseg=n)
    da = xr.DataArray(p[1:], coords={"freq": f[1:]}, dims=["freq"], name="efth")
    hs_est = float(da.spec.hs())
    tp_est = float(da.spec.tp(smooth=True))
    if abs(hs_est / hs - 1) > 0.02:
        fail(f"Hs {hs_est} vs {hs}")
    if abs(tp_est / tp - 1) > 0.02:
        fail(f"Tp {tp_est} vs {tp}")
    # the shape against wavespectra's own spectrum of the same Hs and fp
    fr = f[1:]
    if spectrum == "pm":
        ref = frequency.pierson_moskowitz(freq=fr, fp=1 / tp, hs=hs)
    else:
        ref = frequency.jonswap(freq=fr, fp=1 / tp, gamma=gamma, hs=hs)
    ref = np.asarray(ref)
    # compare energies in bands of 0.05·fp around the peak region
    band = 0.05 / tp
    worst = 0.0
    for lo in np.arange(0.7 / tp, 2.0 / tp, band):
        m = (fr >= lo) & (fr < lo + band)
        e_est, e_ref = p[1:][m].sum(), ref[m].sum()
        worst = max(worst, abs(e_est / e_ref - 1))
    if worst > 0.10:
        fail(f"band energies off by up to {worst:.3f} from wavespectra's {spectrum}")
    # directional moments from the heave-slope triplet (Longuet-Higgins)
    kw = dict(fs=fs, window="boxcar", nperseg=n)
    _, c11 = ss.welch(eta, **kw)
    _, c22 = ss.welch(sx, **kw)
    _, c33 = ss.welch(sy, **kw)
    _, q12 = ss.csd(eta, sx, **kw)
    _, q13 = ss.csd(eta, sy, **kw)
    ok = c11 > 1e-6 * c11.max()
    k = np.sqrt((c22 + c33)[ok] / c11[ok])
    a1 = np.imag(q12[ok]) / (k * c11[ok])
    b1 = np.imag(q13[ok]) / (k * c11[ok])
    w = c11[ok] / c11[ok].sum()
    A1, B1 = (w * a1).sum(), (w * b1).sum()
    r = np.hypot(A1, B1)
    spread_est = np.degrees(np.sqrt(2 * (1 - r)))
    # scipy's csd is conj(X)·Y: for η = a·cos ψ and ∂η/∂x = a·k·e_x·sin ψ
    # its imaginary part is −k·e_x·|a|²/4, so (A1, B1) point against the
    # direction of travel, i.e. where the waves come from
    toward = np.degrees(np.arctan2(-A1, -B1)) % 360
    from_est = (toward + 180) % 360
    # wavespectra's directional spread of the 2D spectrum it builds with
    # the same cos-2s (Cartwright) spreading
    dirs = np.arange(0, 360, 1.0)
    d = direction.cartwright(dir=dirs, dm=mean_dir, dspr=spread)
    e2 = xr.DataArray(np.asarray(ref)[:, None] * np.asarray(d)[None, :],
                      coords={"freq": fr, "dir": dirs}, dims=["freq", "dir"], name="efth")
    spread_ref = float(e2.spec.dspr())
    dm_ref = float(e2.spec.dm())
    if abs(spread_est - spread_ref) > 2.0:
        fail(f"spread {spread_est:.2f} vs wavespectra's {spread_ref:.2f} degrees")
    dd = (from_est - dm_ref + 180) % 360 - 180
    if abs(dd) > 2.0:
        fail(f"mean direction {from_est:.2f} vs {dm_ref:.2f} degrees")
    print(f"ok hs={hs_est:.4f} tp={tp_est:.4f} band_err={worst:.3f} "
          f"spread={spread_est:.2f} (wavespectra {spread_ref:.2f}) dir={from_est:.2f} ({dm_ref:.2f})")


def wind(path, speed, kappa, length, ncomp):
    c = load(path)
    t, u = c["t"], c["wind"]
    fs = 1.0 / (t[1] - t[0])
    lo, hi = 1 / 3600, 0.5

    def cum(f):
        x = length * f / speed
        return 6 * kappa * speed**2 * (1 - (1 + x * x) ** (-1 / 3))

    var = cum(hi) - cum(lo)
    mean, std = u.mean(), u.std()
    if abs(mean / speed - 1) > 0.01:
        fail(f"mean {mean} vs {speed}")
    if abs(std / np.sqrt(var) - 1) > 0.05:
        fail(f"std {std} vs {np.sqrt(var)} (Davenport over [1/3600, 0.5] Hz)")
    # the spectrum: Welch's band energies against Davenport's integral, in
    # bands of whole gust bins (log-spaced edges, docs/model.md §24.4)
    f, p = ss.welch(u - mean, fs=fs, nperseg=len(u) // 4)
    edges = lo * (hi / lo) ** (np.arange(ncomp + 1) / ncomp)
    worst = 0.0
    step = ncomp // 8
    for j in range(step, ncomp - step, step):
        a, b = edges[j], edges[j + step]
        m = (f >= a) & (f < b)
        est = p[m].sum() * (f[1] - f[0])
        ref = cum(b) - cum(a)
        worst = max(worst, abs(est / ref - 1))
    if worst > 0.15:
        fail(f"band energies off by up to {worst:.3f} from Davenport")
    print(f"ok mean={mean:.4f} std={std:.4f} (Davenport {np.sqrt(var):.4f}) band_err={worst:.3f}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "sea":
        sea(a[1], a[2], *map(float, a[3:8]))
    elif a[0] == "wind":
        wind(a[1], float(a[2]), float(a[3]), float(a[4]), int(a[5]))
    else:
        fail(f"unknown check {a[0]}")
