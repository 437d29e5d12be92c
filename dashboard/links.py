"""What a shared link asks for, checked on a session's first run and put right before any widget
takes a value from it.

Links made before the app had pages (``?view=similarity&L=300``) still open the same view with
the same values. Every value is checked against its parameter's rule: a bad one gets a warning
naming it and the value used instead. The app then switches to the link put right (a corrected
value instead of a bad one, other views' and unknown parameters dropped), so the widgets and the
address bar both start from it.
"""

from __future__ import annotations

import streamlit as st

from dashboard import params, registry, sidebar, state
from dashboard.formatting import escape_markdown

_CHECKED = state.LINK_CHECKED
_WARNINGS = state.LINK_WARNINGS


def check_first_visit(pages: dict[str, st.Page], current: st.Page) -> None:
    """Once per session, before any widget: check the link and, if it needs putting right (or
    is an old ``?view=`` link), switch to the page it asks for with the corrected values."""
    if st.session_state.get(_CHECKED):
        return
    st.session_state[_CHECKED] = True
    warnings = st.session_state.setdefault(_WARNINGS, [])
    target = current
    if "view" in st.query_params:  # the form links had before the app had pages
        slug = st.query_params.get("view")
        if slug in pages:
            target = pages[slug]
        else:
            warnings.append(
                f"Ignored URL parameter view={escape_markdown(slug[:40])} (view: expected one "
                f"of {', '.join(pages)}); showing {registry.DEFAULT.label}."
            )
    view = next(v for v in registry.VIEWS if pages[v.slug] is target)
    renamed = _translate_renamed(view)
    shared = view.shared()
    on_screen = (
        *(p for p in sidebar.LINK_PARAMS if p.key in shared or p is sidebar.PRESENT),
        *view.params,
    )
    elsewhere = (
        *(p for p in sidebar.LINK_PARAMS if p not in on_screen),
        *(p for v in registry.VIEWS if v is not view for p in v.params),
    )
    # Other views' old keys are dropped as their parameters are, without a warning.
    old_keys = tuple(r.old for v in registry.VIEWS if v is not view for r in v.renamed)
    found = params.check_link(on_screen, elsewhere, sidebar.from_link(), ignore=("view", *old_keys))
    warnings.extend(found.warnings)
    asked = {key: st.query_params.get_all(key) for key in st.query_params}
    wanted = {
        key: value if isinstance(value, list) else [value] for key, value in found.query.items()
    }
    if target is not current or asked != wanted or renamed:
        st.switch_page(target, query_params=found.query)


def _translate_renamed(view: registry.View) -> bool:
    """A link's old keys of ``view`` put into its new ones (the new key wins when a link has
    both); whether there was any."""
    found = False
    for renamed in view.renamed:
        if renamed.old not in st.query_params:
            continue
        found = True
        raw = st.query_params.get_all(renamed.old)[-1]
        del st.query_params[renamed.old]
        if renamed.param.key not in st.query_params:
            st.query_params[renamed.param.key] = renamed.translate(raw)
    return found


def checked() -> bool:
    """Whether this session's link was checked (its first run is over)."""
    return bool(st.session_state.get(_CHECKED))


def warnings() -> list[str]:
    return st.session_state.get(_WARNINGS, [])


def dismiss() -> None:
    st.session_state[_WARNINGS] = []


def url_key_rows() -> list[str]:
    """The README's table of link keys, one Markdown row a key, from the parameters themselves
    (the sidebar's, then each view's, in the registry's order): what a key sets and on which
    page. ``tests/dashboard/test_readme_keys.py`` checks the README against it."""
    rows = [
        f"| `{param.key}` | every page"
        + ("" if param is sidebar.PRESENT else " that reads the sidebar")
        + f" | {_what(param.label)} |"
        for param in sidebar.LINK_PARAMS
    ]
    for view in registry.VIEWS:
        rows += [
            f"| `{param.key}` | {view.label} (`/{view.slug}`) | {_what(param.label)} |"
            for param in view.params
        ]
    return rows


def _what(label: str) -> str:
    """A widget's label without its parenthesis (the limits and hints it shows beside it)."""
    return label.split(" (")[0].replace("|", "\\|")
