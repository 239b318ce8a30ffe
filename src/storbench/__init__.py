"""storbench: faithful fio workload suites, kept results, honest comparisons."""

__version__ = "0.1.0"
