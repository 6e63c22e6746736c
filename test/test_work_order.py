"""The order make test's workers take the tests in (test/work_order.py): longest work units first."""

from __future__ import annotations

from work_order import durations_from_log, load_durations, order

IDS = ["test/test_a.py::quick", "test/test_a.py::slow", "test/test_b.py::one", "test/test_b.py::two",
       "test/test_c.py::x", "test/test_late.py::l1", "test/test_d.py::y", "test/test_late.py::l2"]


def test_the_longest_unit_comes_first_and_a_grouped_file_stays_together_in_its_order():
    durations = {"test/test_a.py::slow": 30.0, "test/test_b.py::one": 20.0, "test/test_b.py::two": 20.0}
    got = order(IDS, durations, grouped={"test/test_b.py"})
    assert got[:3] == ["test/test_b.py::one", "test/test_b.py::two", "test/test_a.py::slow"]  # 40 s, then 30 s
    assert sorted(got) == sorted(IDS)  # nothing lost, nothing twice
    # unlisted tests keep their collection order
    assert [n for n in got if n not in durations] == [n for n in IDS if n not in durations]


def test_the_late_files_come_after_four_fifths_of_the_others():
    got = order(IDS, {"test/test_late.py::l1": 99.0}, grouped=(), late={"test/test_late.py"})
    assert got[4:6] == ["test/test_late.py::l1", "test/test_late.py::l2"]  # 6 others: after the 4th
    assert got.index("test/test_late.py::l1") > 0


def test_durations_come_from_the_cpu_log_and_short_tests_are_left_out(tmp_path):
    lines = ["1.00\ttest/test_a.py::slow\tgw0\t100.0\t130.5", "0.10\ttest/test_a.py::quick\tgw1\t100.0\t100.4",
             "0.20\told format line without times"]
    assert durations_from_log(lines) == {"test/test_a.py::slow": 30.5}
    broken = tmp_path / "d.json"
    broken.write_text("[1, 2]")
    assert load_durations(broken) == {} and load_durations(tmp_path / "missing.json") == {}


def test_the_shipped_durations_name_tests_that_exist():
    from conftest import ROOT

    shipped = load_durations()
    assert shipped, "test/durations.json is empty or unreadable"
    files = {n.split("::")[0] for n in shipped}
    assert all((ROOT / f).is_file() for f in files), sorted(f for f in files if not (ROOT / f).is_file())
