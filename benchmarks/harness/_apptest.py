"""A view in an AppTest session (``streamlit.testing.v1``), opened as a click in the
navigation opens it."""

from __future__ import annotations


def open_view(at, view: str):
    """Go to a view in the same AppTest session (``at``), as a click in the navigation does;
    ``view`` is a slug or a label.

    Notes
    -----
    This reads and sets two private attributes of AppTest, ``_registered_pages`` and
    ``_page_hash``, because no public API reaches these pages. The app's pages are
    ``st.Page(callable, url_path=slug)``, and ``AppTest.switch_page(page_path)`` (Streamlit
    1.67) takes only the path of a page *file*: given "similarity" it raises ValueError
    ("Could not find page ... relative to the main script"), and given the view's module
    "views/similarity.py" it raises ValueError ("Could not find a navigation page ...":
    a callable page has no script path to match). AppTest has no other public way to pick
    the page a run requests (``query_params`` cannot carry the URL path), so the page's hash
    is looked up by its URL path among the pages ``st.navigation`` registered in the last
    run, and the next run requests it, as ``switch_page`` itself does.
    """
    from dashboard import registry

    labels = {v.slug: v.label for v in registry.VIEWS}
    slug = view if view in labels else next(s for s, label in labels.items() if label == view)
    at._page_hash = next(
        page_hash
        for page_hash, info in at._registered_pages.items()
        if info.get("url_pathname") == slug
    )
    return at.run()
