"""The design recorder's plan, without a network: which runs, in which order, with which
tool options; how factors are declared (thruput.record.design_record)."""

from __future__ import annotations

import pytest

from thruput.record.design_record import (DesignPlan, _notes, _tool_options, load_design_plan,
                                          plan_from_factors)
from thruput.record.far import End
from thruput.record.settings import is_host_setting


def test_factors_from_the_command_line_are_applied_as_their_names_say():
    plan = plan_from_factors(["cc=reno,bbr", "mtu=1500,9000", "application=iperf3,http,disk"], seed=1)
    how = {f.name: (f.applied, f.units, f.levels) for f in plan.factors}
    assert how == {"cc": ("sysctl net.ipv4.tcp_congestion_control", None, ("reno", "bbr")),
                   "mtu": ("mtu", "byte", (1500, 9000)),
                   "application": ("application", None, ("iperf3", "http", "disk"))}
    assert is_host_setting(how["cc"][0]) and is_host_setting("tc qdisc") and not is_host_setting("iperf3 -C")


def test_runs_are_every_cell_times_repeats_in_a_seeded_order():
    plan = plan_from_factors(["cc=reno,bbr", "streams=1,4"], ["cc=iperf3 -C"], repeats=2, seed=5)
    runs = plan.runs()
    assert len(runs) == 8 and len({r[0] for r in runs}) == 8
    assert runs == plan_from_factors(["cc=reno,bbr", "streams=1,4"], ["cc=iperf3 -C"], repeats=2, seed=5).runs()
    assert {r[0] for r in runs} == {f"{cc}-{s}-r{k}" for cc in ("reno", "bbr") for s in (1, 4) for k in (0, 1)}
    run_id, values, repeat = next(r for r in runs if r[0] == "bbr-4-r1")
    assert _tool_options(plan, values) == ["-C", "bbr", "-P", "4"] and repeat == 1


def test_the_notes_name_the_host_settings_applied_or_none():
    hosts = plan_from_factors(["cc=reno,bbr", "mtu=1500,9000", "streams=1,4"], seed=1)
    tool = plan_from_factors(["cc=reno,cubic,bbr", "socket_buffer=131072"], ["cc=iperf3 -C"], seed=1)
    assert ("Host settings (cc, mtu) were applied at both ends before their runs and restored afterwards."
            in _notes(hosts, "netns:a", "netns:b", None, [], None))
    notes = _notes(tool, "netns:a", "netns:b", None, [], None)
    assert "No host setting was changed." in notes and "restored" not in notes


def test_iperf3_options_do_not_apply_to_http_runs():
    plan = plan_from_factors(["window=65536,1048576", "application=iperf3,http"], seed=2)
    ids = sorted(r[0] for r in plan.runs())
    assert ids == ["1048576-iperf3-r0", "65536-iperf3-r0", "_-http-r0"]
    http = next(r for r in plan.runs() if r[0] == "_-http-r0")
    assert http[1]["window"] is None


def test_flags_are_set_by_a_true_level():
    plan = plan_from_factors(["reverse=0,1", "zerocopy=on"], seed=3)
    options = {r[0]: _tool_options(plan, r[1]) for r in plan.runs()}
    assert options == {"0-on-r0": ["-Z"], "1-on-r0": ["-R", "-Z"]}


def test_design_file(tmp_path):
    path = tmp_path / "design.yaml"
    path.write_text("factors:\n"
                    "  - {name: cc, levels: [reno, cubic], applied: iperf3 -C}\n"
                    "  - {name: qdisc, levels: [fq, fq_codel]}\n"
                    "  - {name: tcp_rmem, levels: ['4096 131072 6291456', '4096 131072 33554432']}\n"
                    "repeats: 3\nduration: 5\nsize: 1000000\nseed: 9\n")
    plan = load_design_plan(path, repeats=2)
    assert (plan.repeats, plan.duration_s, plan.size_bytes, plan.seed) == (2, 5, 1000000, 9)
    assert [f.applied for f in plan.factors] == ["iperf3 -C", "tc qdisc", "sysctl net.ipv4.tcp_rmem"]
    assert len(plan.runs()) == 16


@pytest.mark.parametrize("factors, applied, message", [
    (["throughput=1,2"], [], "taken"),
    (["cc=reno"], ["cc=ethtool -K"], "cannot apply"),
    (["application=ftp"], [], "applications are"),
    (["cc"], [], "NAME=LEVEL1"),
    (["cc=reno"], ["mtu=mtu"], "names no factor"),
])
def test_bad_designs_are_refused(factors, applied, message):
    with pytest.raises(ValueError, match=message):
        plan_from_factors(factors, applied, seed=1)


def test_ends():
    assert End().argv(["true"]) == ["true"]
    assert End("netns:x-a").argv(["true"]) == ["ip", "netns", "exec", "x-a", "true"]
    ssh = End("ssh:root@10.0.0.2", ("-p", "2222"), via="x-a").argv(["sysctl", "-w", "a=1 2"])
    assert ssh == ["ip", "netns", "exec", "x-a", "ssh", "-o", "BatchMode=yes", "-p", "2222", "root@10.0.0.2",
                   "sysctl -w 'a=1 2'"]
    with pytest.raises(ValueError, match="expected local"):
        End("docker:x")
