"""The options several commands share are written once: an option block expands into each
command's signature in its place and reaches the command whole, and the attack options map to
an audit's budget the same way for every command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import pydantic
import pytest
import typer
from typer.testing import CliRunner

from hackaudit.cli.commands.audit_run import LabelledAudit
from hackaudit.cli.commands.options import audit_options, expands
from hackaudit.cli.main import app
from hackaudit.shared.contracts import AuditOptions

Size = Annotated[int, typer.Option("-n", help="How many.")]
Name = Annotated[str, typer.Option(help="Whose.")]


@dataclass(frozen=True)
class Block:
    size: Size = 2
    name: Name = "gold"


DEFAULT_BLOCK = Block()


def _toy(seen: list[object]) -> typer.Typer:
    toy = typer.Typer()

    @toy.command()
    @expands(Block)
    def command(
        first: Annotated[str, typer.Argument()],
        block: Block = DEFAULT_BLOCK,
        last: Annotated[bool, typer.Option(help="Last one.")] = False,
    ) -> None:
        seen.append((first, block, last))

    return toy


def test_a_block_reaches_the_command_built_from_its_options() -> None:
    seen: list[object] = []
    done = CliRunner().invoke(_toy(seen), ["x", "-n", "7", "--last"])
    assert done.exit_code == 0, done.output
    assert seen == [("x", Block(size=7, name="gold"), True)]


def test_a_block_s_options_stand_in_its_place_with_their_defaults() -> None:
    command = typer.main.get_command(_toy([]))
    assert [p.name for p in command.params][:4] == ["first", "size", "name", "last"]
    assert [p.default for p in command.params[1:3]] == [2, "gold"]


@pytest.mark.parametrize("name", ["attacker", "repair"])
def test_both_labelled_audits_take_the_whole_block_in_the_same_place(name: str) -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    evaluation = group.commands["eval"]
    assert isinstance(evaluation, typer.core.TyperGroup)
    params = [p.name for p in evaluation.commands[name].params]
    block = list(LabelledAudit.__dataclass_fields__)
    assert params[2 : 2 + len(block)] == block


def test_the_attack_options_give_the_audit_budget_as_keywords_would() -> None:
    made = audit_options(4, 2, 90.0, True, gold_repeats=5, judge=True)
    assert made == AuditOptions(
        candidates_per_round=4, rounds=2, budget_seconds=90.0, stop_when_hackable=True,
        gold_repeats=5, judge=True,
    )  # fmt: skip


def test_an_impossible_budget_is_refused_as_the_contract_refuses_it() -> None:
    with pytest.raises(pydantic.ValidationError):
        audit_options(0, 3, None, False)
