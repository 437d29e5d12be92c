"""The keys of the session state that are not a parameter's own: one module owns them, so that
no two modules use one key for two things and no page touches another page's state.

A parameter's widget keeps its value under its URL key, declared once on the parameter
(:mod:`dashboard.params`); a parameter whose default depends on a shared one says so
(``Param.follows``), and the sidebar resets it when a preset changes that one. Everything else
a run keeps between reruns is named here.
"""

#: The sidebar's preset selector (a widget that sets several parameters, not one itself).
PRESET = "preset"
#: The slug of the page this run draws (set by the app before the page runs).
VIEW = "_view"
#: The keys of the charts drawn in this run (ui.chart), so that charts of a fragment that did
#: not rerun are drawn again from their last figure.
CHARTS_THIS_RUN = "_charts_this_run"
#: Where this run is with the page's first chart and its mark (ui.chart_shown): "none" yet,
#: "pending" (drawn in a fragment, marked when the fragment's call returns) or "marked".
FIRST_CHART = "_first_chart"
#: Whether the code now running is a fragment's, in a full run or its own (ui.fragment).
IN_FRAGMENT = "_in_fragment"
#: Prefix of a chart's last figure, by chart key (ui.chart).
LAST_CHART = "_last_chart_"
#: The visit's first page and whether it was left: the explainer is open on the first page of
#: a visit only (ui.explain).
VISITS = "_visits"
#: Prefix of whether a page's explainer is open, by page slug (ui.explain).
EXPLAIN = "explain_"
#: The theme the browser reports (ui: the heatmaps' colour scale follows it).
THEME = "_theme_watch"
#: The claims this run recorded (dashboard.claims; the tests read them).
CLAIMS = "_claims"
#: Whether this session's link was checked, and the warnings it gave (dashboard.links).
LINK_CHECKED = "_link_checked"
LINK_WARNINGS = "_link_warnings"
#: Notes of values put back within a parameter's range this run (dashboard.params).
RANGE_NOTES = "_range_notes"
#: The Relative position page's clicked pair, and the pair to bring into M's window.
ROTATION_CHOSEN_PAIR = "_rotation_chosen_pair"
ROTATION_BRING_PAIR = "_rotation_bring_pair"
#: The Sinusoids page's clicked position, and the positions last drawn across dimensions.
SINUSOIDS_CHOSEN = "_sinusoids_chosen"
SINUSOIDS_AT_SHOWN = "_at_shown"
#: The Lesson's keyboard and clicker component's last report.
LESSON_KEYS = "lesson_keys"
