"""The report page (``--report FILE.html``, ``seqdedup-library report``): one home for
what a run shows of itself in a browser. ``picture`` gathers it as the run goes (the
run's ledger is its one caller), ``data``, ``library`` and ``reduction`` make the
page's typed documents (``types``), ``charts`` draws them, ``html`` writes the page.
The package holds nothing itself."""
