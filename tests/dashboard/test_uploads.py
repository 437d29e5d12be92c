"""Safe parsing of uploaded matrices: every bad file gets a clear message, nothing is unpickled."""

import io
import json
import os
import pickle
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pe_core
from dashboard.uploads import MAX_BYTES, UploadError, load_matrix, load_pasted
from tests import DATA


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


class TestGoodFiles:
    def test_npy_float32(self):
        # Issue 9: the dtype reaches the fit (it was converted to float64 here and lost).
        matrix = pe_core.sinusoidal_encoding(20, 8).astype(np.float32)
        got = load_matrix("pe.npy", _npy(matrix))
        assert got.dtype == np.float32 and got.shape == (20, 8)
        np.testing.assert_array_equal(got, matrix)

    @pytest.mark.parametrize("shape", [(1, 20, 8), (20, 1, 8), (1, 1, 20, 8)])
    def test_singleton_axes_are_kept_for_the_caller_to_report(self, shape):
        matrix = pe_core.sinusoidal_encoding(20, 8).reshape(shape)
        got = load_matrix("pe.npy", _npy(matrix))
        assert got.shape == shape

    def test_csv_plain(self):
        got = load_matrix("pe.CSV", b"0,1,0,1\n0.84,0.54,0.0099,0.99\n")
        assert got.shape == (2, 4)

    def test_csv_with_header_and_position_column(self):
        text = "position,dim_0,dim_1\n0,0,1\n1,0.84,0.54\n"
        got = load_matrix("pe.csv", text.encode())
        np.testing.assert_array_equal(got, [[0, 1], [0.84, 0.54]])

    def test_our_csv_download_reads_back_bit_for_bit(self):
        from dashboard.config import Config
        from dashboard.exports import encoding_csv

        config = Config(300, 10, 321.5, "tensor2tensor")
        got = load_matrix("pe.csv", encoding_csv(config))
        expected = pe_core.sinusoidal_encoding(300, 10, base=321.5, convention="tensor2tensor")
        np.testing.assert_array_equal(got, expected)

    def test_whitespace_separated(self):
        assert load_matrix("pe.txt", b"0 1\n2 3\n").shape == (2, 2)


class TestBadFiles:
    @pytest.mark.parametrize(
        ("name", "data", "message"),
        [
            ("x.npy", b"", "empty"),
            ("x.npy", b"\x00\x01garbage bytes" * 10, "not a NumPy .npy file"),
            (
                "x.npy",
                _npy(np.array([{"a": 1}, None], dtype=object)),
                "pickles are never loaded",
            ),
            ("x.npy", _npy(np.zeros(5)), "must be 2-D"),
            ("x.npy", _npy(np.zeros((2, 3, 4))), "must be 2-D"),
            ("x.npy", _npy(np.zeros((1, 1, 5))), "must be 2-D"),
            ("x.npy", _npy(np.array([["a", "b"], ["c", "d"]])), "must hold real numbers"),
            ("x.npy", _npy(np.array([[np.nan, 1.0], [0.0, 1.0]])), "NaN or inf"),
            ("x.npy", _npy(np.array([[np.inf, 1.0], [0.0, 1.0]])), "NaN or inf"),
            ("x.npy", _npy(np.zeros((1, 5))), "at least 2 rows"),
            ("x.pkl", pickle.dumps(np.zeros((3, 3))), "is a pickle, which is never loaded"),
            ("x.csv", b"1,2,3\n4,five,6\n", "not a number"),
            ("x.csv", b"\xff\xfe\x00binary", "not UTF-8"),
            ("x.csv", b"a,b\n", "no rows of numbers"),
            ("x.csv", b"1,2\n3\n", "row 2 of the .csv file has 1 number where the first row has 2"),
            ("x.csv", b"1,,2,3\n3,4,5\n", "row 1 of the .csv file has an empty field"),
            ("x.csv", b"1,2\n3,4\n5,x\n", "row 3 of the .csv file holds something that is not a"),
            ("x.csv", b"1,2\n1.2.3,4\n", "not a number"),
            ("x.csv", b"pos,a\n", "header but no rows of numbers"),
            ("x.csv", b"nan,1\n0,1\n", "NaN or inf"),
        ],
    )
    def test_clear_message(self, name, data, message):
        with pytest.raises(UploadError, match=message):
            load_matrix(name, data)

    def test_huge_shape_in_a_small_file(self):
        data = bytearray(_npy(np.zeros((4, 4))))
        header = data[10:].split(b"\n")[0].decode("latin1")
        bigger = header.replace("(4, 4)", "(100000, 100000)").ljust(len(header))
        data[10 : 10 + len(header)] = bigger.encode("latin1")
        with pytest.raises(UploadError, match="more than the limit"):
            load_matrix("x.npy", bytes(data))

    def test_header_promising_more_than_the_file_holds(self):
        data = _npy(np.zeros((40, 40)))[:-800]
        with pytest.raises(UploadError, match="header promises"):
            load_matrix("x.npy", data)

    def test_too_large_file(self):
        with pytest.raises(UploadError, match="more than the limit"):
            load_matrix("x.csv", b"0" * (21 * 1024 * 1024))
        # The browser refuses files over 20,000,000 bytes (maxUploadSize = 20): so does this.
        with pytest.raises(UploadError, match="more than the limit of 20,000,000"):
            load_matrix("x.csv", b"0" * 20_000_001)

    def test_values_are_counted_before_anything_is_converted(self):
        # Issue 18: a 19.9 MB one-line CSV raised the server from 556 to 1,083 MiB before being
        # refused: the text was split into Python strings first. Now the bytes are counted.
        data = b",".join([b"0.5"] * 4_900_000)
        assert len(data) < 20_000_000
        tracemalloc.start()
        try:
            with pytest.raises(UploadError, match="more than 4,194,304 values"):
                load_matrix("x.csv", data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 32 * 2**20, f"{peak:,} bytes to refuse the file"

    @pytest.mark.slow
    def test_largest_accepted_csv_stays_within_the_request_budget(self):
        from dashboard.budget import REQUEST_BYTES

        data = b"\n".join([b",".join([b"0.5"] * 1024)] * 4096)
        tracemalloc.start()
        try:
            matrix = load_matrix("x.csv", data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert matrix.shape == (4096, 1024) and np.all(matrix == 0.5)
        assert peak < REQUEST_BYTES, f"{peak:,} bytes for {len(data):,} bytes of CSV"

    def test_pickle_is_never_called(self, monkeypatch):
        def refuse(*args, **kwargs):
            raise AssertionError("pickle.loads was called")

        monkeypatch.setattr(pickle, "loads", refuse)
        monkeypatch.setattr(pickle, "load", refuse)
        with pytest.raises(UploadError):
            load_matrix("x.npy", _npy(np.array([object()], dtype=object)))


class TestPastedText:
    """Issue 16: the Check view's paste box. Text copied from papers, spreadsheets, web pages
    and terminals, and text written to break the parser."""

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("", "the pasted text is empty"),
            (" \n\t\n", "the pasted text is empty"),
            # Copied from a PDF or a web page: the character is named, not a byte of it.
            (
                "0,1\n\u22121,1",
                "row 2 of the pasted text holds something that is not a number "
                "(the character '\u2212' (MINUS SIGN))",
            ),
            ("0 1\n\u0663 1", "(the character '\u0663' (ARABIC-INDIC DIGIT THREE))"),
            ("0 1\n\uff11 1", "(FULLWIDTH DIGIT ONE)"),
            ("0 1\n1 \u00bd", "(VULGAR FRACTION ONE HALF)"),
            ("0 1\n\x07 1", "(the character '\\x07')"),
            ("0 1\n\ud800 1", "(the byte 0xed)"),  # a lone surrogate from a browser
            ("0 1\n1_000 2", "(the character '_')"),
            ("0 1\ninfinity 1", "(the character 't')"),
            ("0 1\n0x10 1", "(the character 'x')"),
            ("0 1\n<script>alert(1)</script> 1", "(the character '<')"),
            ("0 1\n**1** 0", "(the character '*')"),
            # A thousands separator splits a number in two.
            ("0 1\n1,000 2", "row 2 of the pasted text has 3 numbers where the first row has 2"),
            ("0,1\n1,,2", "row 2 of the pasted text has an empty field"),
            # A mistyped first row is an error, not a header that swallows it.
            ("1e 1\n0 1", "holds something that is not a number"),
            ("n 1\n0 1", "holds something that is not a number"),
            ("0 1\n1.2.3 1", "holds something that is not a number"),
            ("0 1\n--1 1", "holds something that is not a number"),
            # A first line that is not numbers is a header, and the message says so.
            ("\u200b0 1\n1 0", "which was read as a header because '\\u200b0' is not a number"),
            ("pos,a\n1,2", "which was read as a header because 'pos' is not a number"),
            ("1e999 1\n0 1", "NaN or inf (the first at index [0, 0], counting from 0)"),
            ("nan 1\n0 1", "NaN or inf"),
            ("0 1", "at least 2 rows and 2 columns"),
            ("0\n1\n2", "at least 2 rows and 2 columns"),
        ],
    )
    def test_clear_message(self, text, message):
        with pytest.raises(UploadError) as error:
            load_pasted(text)
        assert message in str(error.value)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("0 1\n1 0", [[0, 1], [1, 0]]),
            ("0;1\r\n1;0\r\n", [[0, 1], [1, 0]]),  # Windows line ends, semicolons
            ("0 1\r1 0", [[0, 1], [1, 0]]),  # classic Mac line ends
            ("\ufeff0,1\n1,0", [[0, 1], [1, 0]]),  # a byte-order mark
            ("\n\n0\t1\n\n1\t0\n\n", [[0, 1], [1, 0]]),  # tabs, blank lines
            ("x y\n1 2\n3 4", [[1, 2], [3, 4]]),  # a header
            ("-0 +1E+0\n.5 -1e-400", [[0, 1], [0.5, 0]]),
        ],
    )
    def test_accepted(self, text, expected):
        np.testing.assert_array_equal(load_pasted(text), expected)

    def test_too_long(self):
        with pytest.raises(UploadError, match="more than the limit of 20,000,000"):
            load_pasted("0 " * (MAX_BYTES // 2 + 1))

    @settings(
        # Twice the hypothesis profile's (quick 20, ci 300; tests/conftest.py): pasting is cheap.
        max_examples=int(os.environ.get("PE_FUZZ_EXAMPLES", 2 * settings.default.max_examples)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        st.lists(
            st.sampled_from(
                [
                    "0",
                    "1",
                    "-1",
                    "0.5",
                    "1e5",
                    "1e999",
                    "nan",
                    "inf",
                    "-inf",
                    "1.2.3",
                    "e5",
                    "1e",
                    "+-1",
                    ".",
                    "0x10",
                    "\u0663",
                    "\u2212",
                    "\u200b",
                    "\x00",
                    "\ud800",
                    "\t",
                    ";",
                    ",",
                    ",,",
                    " ",
                    "\n",
                    "\r\n",
                    "\r",
                    "\ufeff",
                    "e",
                    "N",
                    "a",
                ]
            ),
            max_size=40,
        ).map("".join)
        | st.text(max_size=60)
    )
    def test_any_text_is_a_table_or_a_clear_message(self, text):
        """Only a finite table of at least 2 x 2 or an UploadError, and no warning."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                matrix = load_pasted(text)
            except UploadError as error:
                assert str(error)
                return
        assert matrix.ndim == 2 and min(matrix.shape) >= 2
        assert np.isfinite(matrix).all()


class TestTablesTheCoreNowNames:
    """Issue 36's tables on the Check page: the difference and the rebuilt code agree with the
    table (scaled diffusers grids, positional-encodings' cut channels, PatchTST's rescaling),
    not only the core's verdict."""

    SOURCES = json.loads((DATA / "library_tables.json").read_text())
    ARRAYS = np.load(DATA / "library_tables.npz")

    @pytest.mark.parametrize("key", ["diffusers_2d_scaled", "positional_encodings_2d", "patchtst"])
    def test_compared_with_what_it_is_and_rebuilt(self, key):
        from dashboard.views import check

        for case in self.SOURCES[key]:
            table = self.ARRAYS[case["table"]]
            checked = check._check(np.asarray(table))
            grid = checked.grid
            assert checked.diagnosis.identification.matches or (grid and grid.matches), case
            # float32 tables: a few float32 units of the values (~1e-7), far below any mistake
            assert checked.largest_difference < 1e-5, case
            assert checked.code is not None and checked.rebuilt_error < 1e-5, case


LLAMA31 = "llama3.1-Llama-3.1-8B-Instruct.json"


class TestCheckMyRope:
    """Issue 35 on the Check page: a pasted inv_freq is named, and checked against its config."""

    def _app(self, inv_freq, config=None):
        from tests.apptest_helpers import new_app

        at = new_app(view="check", check="RoPE")
        at.run()
        at.text_area(key="rope_check_inv_freq").input(", ".join(map(repr, inv_freq))).run()
        if config is not None:
            at.text_area(key="rope_check_config").input(json.dumps(config)).run()
        assert not at.exception
        return at

    def test_llama31_frequencies_are_named_and_match_their_config(self):
        config = json.loads(
            (DATA / "hf_configs" / "llama3.1-Llama-3.1-8B-Instruct.json").read_text()
        )
        inv_freq = pe_core.rope_from_config(config).inv_freq.astype(np.float32).tolist()
        at = self._app(inv_freq)
        verdict = at.success[0].value
        assert "llama3" in verdict and "base 500,000" in verdict.replace("\\", "")
        at = self._app(inv_freq, config)
        assert "matches the config" in at.success[0].value
        assert at.get("plotly_chart")  # each pair against plain RoPE

    def test_frequencies_in_bfloat16_are_named_as_a_bug_against_the_config(self):
        import ml_dtypes

        config = json.loads(
            (DATA / "hf_configs" / "llama3.1-Llama-3.1-8B-Instruct.json").read_text()
        )
        exact = pe_core.rope_from_config(config).inv_freq
        rounded = exact.astype(ml_dtypes.bfloat16).astype(np.float64).tolist()
        at = self._app(rounded, config)
        assert not at.success
        words = " ".join(w.value for w in at.warning).replace("\\", "")
        assert "departs from the config" in words

    def test_text_that_is_not_numbers_says_so(self):
        from tests.apptest_helpers import new_app

        at = new_app(view="check", check="RoPE")
        at.run()
        at.text_area(key="rope_check_inv_freq").input("one, two").run()
        assert not at.exception
        assert at.error and "Cannot read the frequencies" in at.error[0].value
        # The one reader's message (the command line's too): a line of words is a header.
        assert "the pasted inv_freq has a header but no rows of numbers" in (
            at.error[0].value.replace("\\", "")
        )
        at.text_area(key="rope_check_inv_freq").input("1.0, 0.5\n0.25, x").run()
        assert "row 2 of the pasted inv_freq holds something that is not a number" in (
            at.error[0].value.replace("\\", "")
        )
