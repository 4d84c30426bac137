"""Multi-rank runs (``--nproc``, ``airctl run torchrun``): the launcher, each rank's worker, the
watchdog, the ranks' status and profiles."""
