"""The evaluation page (:func:`recframe.report_page`) in four steps: :mod:`.data` collects what
the page shows as frames and values (no HTML), :mod:`.sections` renders each section from them
(one function each), :mod:`.figures` draws the figures as inline SVG and :mod:`.html` holds the
shell, the tables and the escaping; :mod:`.inspect_html` is :func:`recframe.side_by_side`'s
HTML, which the page's example users use too."""
