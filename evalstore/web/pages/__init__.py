"""The pages, one view per module (as datasette's views): each view reads the store
(:mod:`evalstore.web.queries`, the library), computes nothing the library owns, and returns the
model its template renders inside the one frame (:mod:`evalstore.web.frame`).
:mod:`evalstore.web.context` holds the request context and the errors; :mod:`evalstore.web.choices`
the defaults a page falls back on. The route table (:mod:`evalstore.web.routes`) serves the views
to the live server and the static site alike.
"""
