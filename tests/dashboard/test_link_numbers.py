"""Numbers in a link, however long: a warning and a sane value, never a crash (issue 40).

A few hundred digits make an int too large for a float (``math.isfinite`` raised OverflowError and
broke the page); more than 4,300 digits make ``int()`` itself raise on Python 3.11+ only. The
answer must be the same on every interpreter.
"""

from __future__ import annotations

import math

import pytest

import pe_core
from dashboard import params
from dashboard.views import rope as rope_view
from tests.apptest_helpers import new_app, no_errors

LONG = {
    "310 nines": "9" * 310,
    "400 nines": "9" * 400,
    "4,301 nines": "9" * 4301,
    "10,000 digits": "1" * 10_000,
}


class TestReadNumber:
    @pytest.mark.parametrize("text", LONG.values(), ids=LONG.keys())
    @pytest.mark.parametrize("integer", [True, False])
    def test_long_integer_text_is_infinite_not_an_error(self, text, integer):
        assert params._read_number(text, integer) == math.inf
        assert params._read_number("-" + text, integer) == -math.inf

    def test_leading_zeros_do_not_count(self):
        assert params._read_number("0" * 500 + "42", integer=True) == 42
        assert params._read_number("-" + "0" * 500 + "7", integer=True) == -7

    @pytest.mark.parametrize("text", ["1.5", "abc", "9" * 400 + ".5", "x" * 5000])
    def test_other_text_is_not_an_integer(self, text):
        with pytest.raises(ValueError):
            params._read_number(text, integer=True)

    def test_short_numbers_read_as_before(self):
        assert params._read_number(" 2048 ", integer=True) == 2048
        assert params._read_number("1e3", integer=False) == 1000.0


class TestLink:
    @pytest.mark.parametrize("text", LONG.values(), ids=LONG.keys())
    def test_a_huge_integer_is_a_warning_and_the_nearest_allowed_value(self, text):
        at = new_app(L=text, d="-" + text, base=text)
        at.run()
        no_errors(at)
        shown = " ".join(w.value for w in at.warning).replace("\\", "")
        assert "L=999" in shown or "L=111" in shown
        assert shown.count("out of range") == 3, shown
        assert at.number_input(key="L").value == 1_000_000
        assert at.number_input(key="d").value == 1

    def test_a_huge_integer_in_a_choice_or_a_list_is_a_warning(self):
        text = "9" * 5000
        at = new_app(view="sinusoids", prec=text, dims=[text])
        at.run()
        no_errors(at)
        shown = " ".join(w.value for w in at.warning).replace("\\", "")
        assert "prec=999" in shown and "dims=999" in shown
        assert shown.count("expected values from") == 1, shown


@pytest.mark.parametrize("depth", [99, 340, 999])
def test_a_valid_config_with_deep_junk_beside_its_keys_is_drawn_or_refused_by_name(depth):
    # Issue 40 found "Something went wrong" at 340-999 levels (recursion in the snippet's
    # pretty-printing); the JSON depth limit (pe_core.MAX_JSON_DEPTH) now refuses them first,
    # and a config at the limit is drawn, snippet and all.
    text = '{"head_dim": 64, "junk": ' + "[" * depth + "]" * depth + "}"
    at = new_app(view="rope", rope_model=rope_view.PASTE, rope_json=text)
    at.run()
    no_errors(at)
    shown = " ".join(w.value for w in at.warning).replace("\\", "")
    if depth < pe_core.MAX_JSON_DEPTH:
        assert not shown and at.get("code"), shown
    else:
        assert f"more than {pe_core.MAX_JSON_DEPTH} levels deep" in shown
