"""The command-line interface: thin typer commands over library calls (style.md §8)."""
