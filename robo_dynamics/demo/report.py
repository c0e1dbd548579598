"""The demo's report: the table, the comparisons between phases and the plots."""

import numpy as np

from .scenario import (EFFORT_NOISE, IDENTIFIED_RMS_RATIO, OBSERVER_GAIN, PHASES, PUSH_FORCE,
                       PUSH_SECONDS, TIP_FORCE, TIP_PUSH_SECONDS, TIP_RAMP_SECONDS, desired)


def print_table(results):
    print()
    print(f"{'phase':<44}{'joint':>6}{'rms err':>11}{'max err':>11}{'final err':>11}"
          f"{'peak |τ|':>11}{'limit':>8}{'use':>7}")
    print(f"{'':<44}{'':>6}{'[rad]':>11}{'[rad]':>11}{'[rad]':>11}{'[N m]':>11}{'[N m]':>8}"
          f"{'':>7}")
    for name, s in results.items():
        for j in range(len(s["rms"])):
            label = (name if j == 0 else f"  ({s['samples']} states, {s['span']:.1f} s)"
                     if j == 1 else "")
            print(f"{label:<44}{j + 1:>6}{s['rms'][j]:>11.2e}{s['max'][j]:>11.2e}"
                  f"{s['final'][j]:>11.2e}{s['peak'][j]:>11.2f}{s['limit'][j]:>8.0f}"
                  f"{100 * s['peak'][j] / s['limit'][j]:>6.1f}%")


def summary(results, contacts, engine):
    """Print the lines that compare phases (those whose phases ran); the number of
    comparisons NOT as expected."""
    failed = 0
    names = [p.name for p in PHASES]
    if names[0] in results:
        drift = results[names[0]]["final"].max()
        print(f"\ngravity compensation: drift after {results[names[0]]['span']:.1f} s = "
              f"{drift:.2e} rad (max over joints)")
    if all(name in results for name in names[:4]):
        g_off, g_on, t_off, t_on = (results[name] for name in names[:4])  # 1.–4.
        print(f"friction compensation off → on (plant: engine {engine}): drift "
              f"{g_off['final'].max():.2e} → {g_on['final'].max():.2e} rad; computed torque "
              f"max error {t_off['max'].max():.2e} → {t_on['max'].max():.2e} rad, RMS (worst "
              f"joint) {t_off['rms'].max():.2e} → {t_on['rms'].max():.2e} rad")
    identified = [p for p in PHASES if p.guess_kg is not None and p.name in results]
    if identified and "computed torque, 1 kg payload declared" in results:
        exact = results["computed torque, 1 kg payload declared"]["rms"].max()
        after = results[identified[0].name]["rms"].max()
        ok = after <= IDENTIFIED_RMS_RATIO * exact
        failed += not ok
        print(f"payload identified by the node: tracking RMS (worst joint) {after:.2e} rad "
              f"against {exact:.2e} rad with the payload declared exactly: "
              f"{after / exact:.2f}× {'≤' if ok else '>'} {IDENTIFIED_RMS_RATIO:g}×"
              + ("" if ok else ", NOT as expected"))
    if all(p.name in results for p in PHASES if not p.whole_arm):    # (11. is not there)
        quiet = [f["ratio"] for p in PHASES
                 if p.expect != "hold" and not p.whole_arm and (f := contacts[p.name])]
        push = next(contacts[p.name] for p in PHASES if p.push)
        print(f"external torques (effort noise {EFFORT_NOISE} N·m, observer gain "
              f"{OBSERVER_GAIN:g}/s): no contact while tracking or holding at the default "
              f"thresholds (largest |τ̂| = {max(quiet):.2f} × the contact threshold); pushed "
              f"with {PUSH_FORCE:g} N, collision after "
              f"{1e3 * push.get('delay', float('nan')):.0f} ms")
    return failed


def plot(records, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tracked = [(name, r) for name, r in records.items() if r[0]]
    if not tracked:
        return False
    fig, axes = plt.subplots(2, len(tracked), figsize=(7 * len(tracked), 8), squeeze=False)
    for col, (name, (_, t, q, tau)) in enumerate(tracked):
        q_d = desired(t)[0]
        for j in range(q.shape[1]):
            line, = axes[0, col].plot(t, q[:, j], label=f"joint {j + 1}")
            axes[0, col].plot(t, q_d[:, j], "--", color=line.get_color(), linewidth=0.8)
            axes[1, col].plot(t, tau[:, j], color=line.get_color(), label=f"joint {j + 1}")
        axes[0, col].set_title(f"{name}: actual (solid) vs desired (dashed)")
        axes[0, col].set_ylabel("position [rad]")
        axes[1, col].set_title("commanded torque (applied by sim_arm)")
        axes[1, col].set_ylabel("torque [N m]")
        axes[1, col].set_xlabel("time [s]")
        axes[0, col].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def plot_payload(phase, result, path):
    """The payload the node found against the truth: mass and centre of mass (tool0's frame;
    the truth is at its origin), with ±3 standard deviations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    com, std = result.payload.com, result.com_std
    fig, (ax_m, ax_c) = plt.subplots(1, 2, figsize=(9, 3.5),
                                     gridspec_kw={"width_ratios": [1, 3]})
    ax_m.bar([0, 1], [phase.payload_kg, result.payload.m], yerr=[0, 3 * result.mass_std],
             color=["0.7", "C0"], capsize=4)
    ax_m.axhline(phase.guess_kg, color="C3", ls="--", lw=0.8, label="told the node")
    ax_m.set_xticks([0, 1], ["truth", "identified"])
    ax_m.set_ylabel("mass [kg]")
    ax_m.legend(fontsize=7)
    x = np.arange(3)
    ax_c.bar(x - 0.2, np.zeros(3), 0.4, color="0.7", label="truth (0)")
    ax_c.bar(x + 0.2, 1e3 * np.array([com.x, com.y, com.z]), 0.4,
             yerr=3e3 * np.array([std.x, std.y, std.z]), color="C0", capsize=4,
             label="identified (±3σ)")
    ax_c.set_xticks(x, ["x", "y", "z"])
    ax_c.set_ylabel("centre of mass [mm], tool0")
    ax_c.legend(fontsize=7)
    fig.suptitle(f"payload identified by the node from {result.samples} noisy joint states "
                 "at poses it chose", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_external(observed, path):
    """Estimated (solid) against true (dashed) external joint torques around the push."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(9, 4.5))
    push = observed["push_at"]
    window = (observed["t"] > push - 0.2) & (observed["t"] < push + PUSH_SECONDS + 0.4)
    in_truth = (observed["truth_t"] > push - 0.2) & (observed["truth_t"] < push + 0.7)
    for j in range(observed["estimate"].shape[1]):
        line, = ax.plot(observed["t"][window], observed["estimate"][window, j],
                        label=f"joint {j + 1}")
        if len(observed["truth"]):
            ax.plot(observed["truth_t"][in_truth], observed["truth"][in_truth, j], "--",
                    color=line.get_color(), linewidth=0.9)
    ax.axvspan(push, push + PUSH_SECONDS, color="0.9")
    ax.set_title(f"pushed with {PUSH_FORCE:g} N: external joint torques, estimated from "
                 f"noisy efforts (solid) vs true (dashed)")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("τ_ext [N m]")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_compliance(observed, figures, path):
    """The tip's displacement from its target per base axis (solid) against K⁻¹F while the
    full push acts and zero otherwise (dashed), with the dry-friction band (shaded)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, d = observed["t_tip"], 1e3 * (observed["tip"] - observed["target"])
    on = observed["push_at"] + TIP_RAMP_SECONDS
    off = observed["push_at"] + TIP_PUSH_SECONDS - TIP_RAMP_SECONDS
    full = (t >= on) & (t <= off)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for i, axis in enumerate("xyz"):
        line, = ax.plot(t, d[:, i], label=f"{axis}")
        expected = np.where(full, 1e3 * figures["expected"][i], 0.0)
        ax.plot(t, expected, "--", color=line.get_color(), linewidth=0.9)
        ax.fill_between(t, expected - 1e3 * figures["allowed"][i],
                        expected + 1e3 * figures["allowed"][i], color=line.get_color(),
                        alpha=0.12, linewidth=0)
    ax.axvspan(observed["push_at"], off + TIP_RAMP_SECONDS, color="0.93", zorder=0)
    ax.set_title(f"Cartesian impedance, pushed at the tip with {np.linalg.norm(TIP_FORCE):g} "
                 "N: displacement (solid) vs K⁻¹F (dashed), shaded: the allowance "
                 "(5 % + dry friction)", fontsize=9)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("tip − target [mm], base axes")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
