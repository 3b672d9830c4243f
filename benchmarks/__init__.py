"""The performance harness: `make bench` prints one `NAME: VALUE` line per figure."""
