"""The run machinery every command shares: a run's lifecycle (signals, liveness, the user's code
boundary, the current-run pointer, logs, finishing), loading the model script, and SOURCE resolution."""
