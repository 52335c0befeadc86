"""What every layer stands on: errors, records and inputs, the 128-bit identity, the
kernel loaded once, token estimates, signals and where settings live. Internal."""
