"""No upload or paste is answered with the empty prompt: each says what happened (issue 40)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from dashboard import uploads
from dashboard.uploads import MAX_BYTES, UploadError, load_matrix, load_pasted
from dashboard.views import check as check_view
from dashboard.views import rope as rope_view
from tests.apptest_helpers import new_app, no_errors
from tests.payloads import zip_bomb

EMPTY_PROMPT = "Upload a table"


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **(arrays or {"table": np.zeros((4, 4))}))
    return buffer.getvalue()


def _zip_bomb() -> bytes:
    """A small archive that would expand to 1 GiB (never opened by the page)."""
    return zip_bomb("table.npy")


def _over_the_limit() -> bytes:
    """One byte more than the upload limit (20 MB), built when a test asks for it."""
    return b"1" * (MAX_BYTES + 1)


class TestMessages:
    @pytest.mark.parametrize(
        ("name", "build", "message"),
        [
            ("bomb.npz", _zip_bomb, "declares 1,073,741,824 bytes once unpacked"),
            ("table.zip", lambda: b"PK\x03\x04", "'table.zip' is an archive"),
            ("weights.pt", lambda: b"\x80\x02", "'weights.pt' is a PyTorch file (pickled)"),
            ("notes.docx", lambda: b"x", "'notes.docx' must be a .npy, .npz, .safetensors, .csv"),
            ("noextension", lambda: b"x", "'noextension' must be a .npy, .npz, .safetensors, .csv"),
        ],
        ids=["zip-bomb", "zip", "pt", "docx", "no-extension"],
    )
    def test_other_formats_name_the_file_and_the_accepted_ones(self, name, build, message):
        with pytest.raises(UploadError) as caught:
            load_matrix(name, build())
        assert message in str(caught.value)
        assert ".npz, .safetensors, or .csv/.txt" in uploads.ACCEPTED
        assert "20 MB" in uploads.ACCEPTED

    def test_an_archive_of_one_table_is_read_and_of_several_names_them(self):
        # One reader for every road: the table page reads what the command line reads.
        np.testing.assert_array_equal(load_matrix("table.npz", _npz()), np.zeros((4, 4)))
        with pytest.raises(UploadError, match=r"holds \['a', 'b'\]: save the one table"):
            load_matrix("two.npz", _npz(a=np.zeros((4, 4)), b=np.ones((4, 4))))

    def test_the_bomb_is_never_opened(self):
        import tracemalloc

        data = _zip_bomb()
        tracemalloc.start()
        with pytest.raises(UploadError):
            load_matrix("bomb.npz", data)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 2**20

    @pytest.mark.slow  # inflates the gibibyte
    def test_the_bomb_is_a_real_one(self):
        """The hand-assembled archive (tests/payloads.py) is what zipfile would write: one
        member of 2**30 zeros, read back in full with its CRC checked at the end."""
        data = _zip_bomb()
        assert len(data) < 2**21
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            (member,) = archive.infolist()
            assert (member.filename, member.file_size) == ("table.npy", 2**30)
            assert member.compress_type == zipfile.ZIP_DEFLATED
            unpacked = 0
            with archive.open(member) as handle:  # raises BadZipFile on a wrong CRC
                while chunk := handle.read(2**24):
                    assert not chunk.strip(b"\0")
                    unpacked += len(chunk)
        assert unpacked == 2**30

    def test_too_large_names_the_limit_in_megabytes(self):
        with pytest.raises(UploadError, match=r"20,000,001 bytes, more than the limit of "):
            load_matrix("big.csv", _over_the_limit())
        with pytest.raises(UploadError, match=r"\(20 MB\)"):
            load_matrix("big.csv", _over_the_limit())

    @pytest.mark.parametrize("shape", ["(-1, 4)", "(3, -4)", "(2.5, 4)", "(True, 4)"])
    def test_an_npy_header_with_a_bad_shape_says_so(self, shape):
        buffer = io.BytesIO()
        np.save(buffer, np.zeros((3, 4)))
        data = buffer.getvalue().replace(b"(3, 4)", shape.encode().ljust(6))
        with pytest.raises(UploadError, match=r"negative length|header is malformed|promises"):
            load_matrix("neg.npy", data)

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("1,2,3\n4,,6\n7,8,9\n", "row 2 of the .csv file has an empty field"),
            ("1,2,3\n4,5,6,\n", "row 2 of the .csv file has an empty field"),
            ("1,2,3\n,5,6\n", "row 2 of the .csv file has an empty field"),
            ("1,2,3\n4,5\n7,8,9\n", "row 2 of the .csv file has 2 numbers where the first"),
            ("1,2,3\n4,5 6\n", "row 2 of the .csv file separates its values with spaces"),
            ("1 2 3\n4 5\n", "row 2 of the .csv file has 2 numbers"),
        ],
        ids=["empty-middle", "trailing-comma", "leading-comma", "ragged", "mixed", "spaces"],
    )
    def test_an_empty_field_is_not_a_ragged_row(self, text, message):
        with pytest.raises(UploadError) as caught:
            load_matrix("t.csv", text.encode())
        assert message in str(caught.value)

    def test_pasted_rows_name_the_pasted_text(self):
        with pytest.raises(UploadError, match="row 2 of the pasted text has an empty field"):
            load_pasted("1,2\n3,\n")


def _check_page():
    at = new_app(view="check")
    at.run()
    return at


class TestPage:
    @pytest.mark.parametrize(
        ("name", "build", "shown"),
        [
            (
                "two.npz",
                lambda: _npz(a=np.zeros((4, 4)), b=np.ones((4, 4))),
                "save the one table",
            ),
            ("bomb.npz", _zip_bomb, "declares 1,073,741,824 bytes once unpacked"),
            ("big.csv", _over_the_limit, "more than the limit of 20,000,000"),
        ],
        ids=["npz-of-two", "zip-bomb", "over-20-MB"],
    )
    def test_an_upload_is_answered_with_what_happened(self, name, build, shown):
        at = _check_page()
        at.file_uploader(key="check_upload").upload(name, build(), "application/octet-stream")
        at.run()
        assert not at.exception
        errors = " ".join(e.value for e in at.error).replace("\\", "")
        assert f"Cannot read {name}" in errors and shown in errors
        assert not any(EMPTY_PROMPT in i.value for i in at.info)

    def test_the_uploader_states_the_formats_and_the_limit(self):
        at = _check_page()
        assert uploads.ACCEPTED in at.file_uploader(key="check_upload").label
        (prompt,) = [i.value for i in at.info if EMPTY_PROMPT in i.value]
        assert uploads.ACCEPTED in prompt and "refused by your browser" in prompt

    def test_a_paste_over_the_cap_says_so(self):
        at = _check_page()
        at.text_area(key="check_paste").input("0," * (check_view.MAX_PASTE_CHARS // 2 + 250))
        at.run()
        assert not at.exception
        errors = " ".join(e.value for e in at.error)
        assert "The pasted text has 200,500 characters, more than the 200,000" in errors
        assert not any(EMPTY_PROMPT in i.value for i in at.info)


def test_a_config_paste_over_the_cap_is_not_taken_as_the_label_says():
    # The box takes as many characters as the page reads (issue 53: its counter said 40,000
    # under a label that said 20,000); a longer paste is not taken, as its label says.
    at = new_app(view="rope", rope_model=rope_view.PASTE)
    at.run()
    text = '{"head_dim": 64, "notes": "' + "x" * 25_000 + '"}'
    at.text_area(key="rope_json").input(text)
    at.run()
    no_errors(at)
    assert at.text_area(key="rope_json").value == ""
    assert "a longer paste is not taken" in at.text_area(key="rope_json").label
    assert any("Paste a model's config.json" in i.value for i in at.info)
