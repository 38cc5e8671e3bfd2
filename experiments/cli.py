"""``l3mp bench``: the experiments' one front door from the product's command line (the same as
``python -m experiments``). The product names this module and imports it only when it runs."""

from __future__ import annotations

import click


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def bench(argv: tuple[str, ...]) -> int:
    """Experiments and benchmarks: `l3mp bench NAME [OPTIONS]`, or all of them; `l3mp bench --help`."""
    from experiments.__main__ import main

    return main(list(argv))
