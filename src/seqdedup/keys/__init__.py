"""Keys: what a record is compared as (skip, JSON, normalise, mask, transform), the
``--track``/``--bypass`` filters and each record's stream name. Internal."""
