"""`python -m airctl` runs the CLI."""

from airctl.cli.main import run

if __name__ == "__main__":
    run()
