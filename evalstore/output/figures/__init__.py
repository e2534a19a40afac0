"""The figures as plain data (:mod:`.model`), each built once from what an analysis yields:
:mod:`.analyses` (the meta analyses, from their result rows: in memory or stored alike) and
:mod:`.runs` (eval, compare and repro). The matplotlib backend
(:mod:`evalstore.output.matplotlib_backend`) and the web's SVG (:mod:`evalstore.web.figure_charts` with the
macros of ``web/templates/figures.html``) draw the same models, so a figure says the same in a
paper and a browser. Nothing here imports above ``report/``."""
