"""The sandbox's pure logic: patches, runners, log parsers, grading and the run protocol.

Nothing here talks to Docker, the bus or the file system; the adapters do, and hand their raw
observations back to this package to be read.
"""
