"""The store's results as web pages: ``evalstore serve`` (a local, read-only web explorer) and
``evalstore report`` (the same pages as static HTML files).

* :mod:`.queries`: what the pages read (bound SQL over the store's views);
* :mod:`.pages`: one view per page (queries -> the template's model) in the one frame (:mod:`.frame`);
* :mod:`.routes`: the route table (view, template, address, report files, navigation) that drives both
  the server and the static site;
* :mod:`.meta_view`: the stored analyses as the meta page shows them (the figure models of
  :mod:`evalstore.output.figures`);
* :mod:`.svg`, :mod:`.figure_charts`, :mod:`.page_charts`: the charts' geometry (scales, ticks,
  where each mark goes); ``templates/figures.html`` draws them as SVG (Jinja macros, autoescaped);
* :mod:`.links`: the links of each (routes of the server, relative files of the report) and safe file names;
* :mod:`.render`: Jinja2 templates (autoescaped) and the static files;
* :mod:`.sqlpage`: the sandboxed query page (one read-only statement, row cap, time limit);
* :mod:`.app`: the Starlette application; :mod:`.server`: binding and uvicorn; :mod:`.static_site`: the static report.

Only :mod:`.app`, :mod:`.server` and :mod:`.render` need the web extra (``pip install "evalstore[web]"``),
and import it when they are used; ``import evalstore`` imports none of this package.
"""
