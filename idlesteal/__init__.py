"""idlesteal harness: fetch, build, boot and benchmark a Linux 7.2 guest."""

__version__ = "0.1.0"
