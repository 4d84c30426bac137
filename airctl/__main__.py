"""`python -m airctl` runs the CLI."""

from airctl.cli.main import console

if __name__ == "__main__":
    console()
