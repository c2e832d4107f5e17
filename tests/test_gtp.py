"""GTP both ways: ``mc-envs gtp`` against GNU Go, GNU Go as a ``gtp:`` agent, broken engines.

The GNU Go tests fail (not skip) without /usr/games/gnugo: ``apt-get install gnugo`` (.ci/run
does it).
"""

import os
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mc_envs  # noqa: F401
from mc_envs.agents.gtp_player import GtpError, GtpPlayer
from mc_envs.agents.specs import parse
from mc_envs.cli.arena import arena
from mc_envs.cli.gtp_engine import COMMANDS, GtpEngine, move_budget

GNUGO = "/usr/games/gnugo"
GNUGO_ARGS = [GNUGO, "--mode", "gtp", "--level", "0", "--positional-superko", "--seed", "1"]
OURS = [sys.executable, "-m", "mc_envs.cli", "gtp", "--agent", "random", "--max-moves", "400"]
MAX_MOVES = 300  # a referee's bound on one game


@pytest.fixture
def gnugo() -> str:
    if not os.access(GNUGO, os.X_OK):
        pytest.fail(f"{GNUGO} is missing: apt-get install gnugo (GNU Go 3.8, Debian's package)")
    return GNUGO


def children() -> list[int]:
    """This process's child processes (zombies included: an unreaped child is left behind)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.append(int(stat.parent.name))
    return found


def board_of(showboard: str, n: int = 9) -> np.ndarray:
    """The board of a ``showboard`` answer (ours or GNU Go's): 0 empty, 1 Black, 2 White."""
    rows = {}
    for line in showboard.splitlines():
        words = line.split()
        if len(words) >= n + 1 and words[0].isdigit():
            rows[int(words[0])] = ["XO".find(w) + 1 for w in words[1 : n + 1]]
    return np.array([rows[r] for r in range(n, 0, -1)])


# -- our engine, in process -----------------------------------------------------------------------


def answers(engine: GtpEngine, *lines: str) -> list[str]:
    return [a for a in (engine.handle(line)[0] for line in lines) if a is not None]


def test_protocol_ids_errors_and_malformed_lines() -> None:
    engine = GtpEngine("random", size=9)
    out = answers(
        engine,
        "7 protocol_version",
        "# a comment",
        "   ",
        "play b E5 # a comment after",
        "\x01\x02garbage here",
        "3",
        "play b",
        "play b Z9",
        "play purple E5",
        "komi seven",
        "boardsize 4",
        "boardsize 25",
        "12 name",
    )
    assert out == [
        "=7 2\n\n",
        "= \n\n",
        "? unknown command\n\n",
        "?3 syntax error: no command\n\n",
        "? syntax error (use: play COLOUR VERTEX)\n\n",
        out[5],
        out[6],
        "? syntax error: 'seven' is not a number\n\n",
        "? unacceptable size\n\n",
        "? unacceptable size\n\n",
        "=12 mc-envs\n\n",
    ]
    assert out[5].startswith("? syntax error: 'Z9' is not a vertex")
    assert out[6].startswith("? syntax error: 'purple' is not a colour")
    assert engine.env.board.sum() == 1  # E5 stands; the errors changed nothing


def test_known_command_and_list_commands_agree() -> None:
    engine = GtpEngine("random")
    listed = answers(engine, "list_commands")[0][2:].split()
    assert listed == list(COMMANDS)
    for name in listed:
        assert answers(engine, f"known_command {name}") == ["= true\n\n"]
        assert engine.handle(f"{name}")[0] != "? unknown command\n\n"
    assert answers(engine, "known_command genmove_analyze") == ["= false\n\n"]


def test_play_undo_showboard_score() -> None:
    engine = GtpEngine("random", size=5, komi=0.5)
    # A ko on the first line: Black C1 takes White's B1; White's retake at B1 is refused.
    moves = ["b A1", "w B1", "b B2", "w C2", "b E5", "w D1", "b C1"]
    assert answers(engine, *(f"play {m}" for m in moves)) == ["= \n\n"] * 7
    assert answers(engine, "play w B1", "play b C1", "play white A5", "play b B5") == [
        "? illegal move\n\n",  # positional superko (the ko)
        "? illegal move\n\n",  # occupied (out of turn: the pass put in for White is taken back)
        "= \n\n",
        "= \n\n",
    ]
    assert answers(engine, "undo", "undo") == ["= \n\n", "= \n\n"]
    assert len(engine.moves) == 7 and engine.env.current_player == 1
    board = answers(engine, "showboard")[0]
    assert board.startswith("= \n") and "\n\n" not in board[:-2]
    assert board_of(board, 5)[4].tolist() == [1, 0, 1, 2, 0]
    # Black: 4 stones and B1; White: 2 stones and komi 0.5; the rest reaches both.
    assert answers(engine, "final_score") == ["= B+2.5\n\n"]
    assert answers(engine, "undo", "undo") == ["= \n\n", "= \n\n"]
    assert board_of(answers(engine, "showboard")[0], 5)[4].tolist() == [1, 2, 0, 0, 0]
    assert answers(engine, *["undo"] * 5, "undo") == ["= \n\n"] * 5 + ["? cannot undo\n\n"]
    assert engine.env.board.sum() == 0 and engine.moves == []
    out = answers(engine, "komi 6.25", "komi 5")
    assert out[0].startswith("? unacceptable komi") and out[1] == "= \n\n"
    assert engine.env.komi == 5


def test_genmove_and_time_budget() -> None:
    engine = GtpEngine("uct-beginner", seed=1)
    assert answers(engine, "play b E5")
    (move,) = answers(engine, "genmove white")
    assert move.startswith("= ") and engine.env.current_player == 0
    assert len(engine.moves) == 2
    assert answers(engine, "time_settings 10 0 0", "time_left b 5 0") == ["= \n\n"] * 2
    agent, seen = engine.agent, []
    act = agent.act
    agent.act = lambda env: seen.append((agent.iterations, agent.time_limit)) or act(env)
    (move,) = answers(engine, "genmove b")  # 5 s / 39 moves (78 empty points), times 0.8
    assert move.startswith("= ") and len(engine.moves) == 3
    assert seen == [(None, pytest.approx(0.8 * 5 / 39))]  # searched by that clock alone
    assert (agent.iterations, agent.time_limit) == (20, None)  # the preset's budget back after
    # The rule: main time over max(10, empty / 2); byo-yomi time over its stones.
    assert move_budget(None, None, 81) is None
    assert move_budget((600, 0, 0), None, 81) == pytest.approx(0.8 * 600 / 40)
    assert move_budget((600, 0, 0), (30, 0), 10) == pytest.approx(0.8 * 3)
    assert move_budget((0, 30, 5), None, 81) == pytest.approx(0.8 * 6)
    assert move_budget((60, 30, 5), (1, 0), 81) == pytest.approx(0.8 * 6)
    assert move_budget((60, 30, 5), (20, 4), 81) == pytest.approx(0.8 * 5)
    assert move_budget((60, 30, 0), None, 81) is None  # GTP: no time limit
    assert move_budget((0, 0, 0), None, 81) == 0.05


# -- our engine against GNU Go, through both ends -------------------------------------------------


def referee(black: GtpPlayer, white: GtpPlayer) -> tuple[int, str]:
    """Relays genmove/play between two engines until two passes or a resignation; the moves."""
    for engine in (black, white):
        for command in ("boardsize 9", "komi 7.5", "clear_board"):
            engine.send(command)
    passes = 0
    for i in range(MAX_MOVES):
        colour, mover, other = ("b", black, white) if i % 2 == 0 else ("w", white, black)
        move = mover.send(f"genmove {colour}").lower()
        if move == "resign":
            return i, "resign"
        other.send(f"play {colour} {move}")  # a '?' (illegal there) raises GtpError
        passes = passes + 1 if move == "pass" else 0
        if passes == 2:
            return i + 1, "passes"
    raise AssertionError(f"no end in {MAX_MOVES} moves")


def test_our_engine_against_gnugo_both_colours(gnugo: str) -> None:
    with GtpPlayer(OURS, timeout=60) as ours, GtpPlayer(GNUGO_ARGS, timeout=30) as theirs:
        with pytest.raises(GtpError, match="refused 'no_such_command': unknown command"):
            ours.send("no_such_command")  # a malformed line: '?' and the engine goes on
        assert ours.send("\x07name\t# control characters and a comment, ignored") == "mc-envs"
        for black, white in ((ours, theirs), (theirs, ours)):
            moves, end = referee(black, white)
            assert moves > 10, end
            mine, theirs_board = (
                board_of(ours.send("showboard")),
                board_of(theirs.send("showboard")),
            )
            assert (mine == theirs_board).all()  # captures agree
            assert ours.send("final_score")[:2] in ("B+", "W+") or ours.send("final_score") == "0"
        pid = ours.pid
    assert pid not in children()


def test_engine_ends_cleanly_at_end_of_input() -> None:
    import subprocess

    done = subprocess.run(
        OURS,
        input="name\nnot a command\nprotocol_version\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "= mc-envs\n\n? unknown command\n\n= 2\n\n"


def test_gnugo_as_opponent_both_colours(gnugo: str) -> None:
    for side in (0, 1):
        with GtpPlayer(GNUGO_ARGS, timeout=30) as player:
            env = gym.make(
                "mc_envs/Go-v0", opponent=player, agent_player=side, illegal_action="raise"
            )
            env.reset(seed=side)
            mine = parse("random", seed=side)
            terminated, steps = False, 0
            while not terminated:
                _, reward, terminated, truncated, _ = env.step(mine.act(env))
                steps += 1
                assert steps <= MAX_MOVES and not truncated
            assert reward in (-1.0, 1.0)
            assert (board_of(player.send("showboard")) == env.unwrapped.board).all()
            pid = player.pid
        assert pid not in children()


def test_the_engine_follows_resets_undos_and_restored_positions(gnugo: str) -> None:
    env = gym.make("mc_envs/Go-v0", illegal_action="raise").unwrapped
    other = gym.make("mc_envs/Go-v0", illegal_action="raise").unwrapped
    with GtpPlayer(GNUGO_ARGS, timeout=30) as player:

        def agrees() -> bool:
            return bool((board_of(player.send("showboard")) == env.board).all())

        env.reset(seed=0)
        mine = parse("random", seed=5)
        snapshots = []
        for _ in range(6):  # the player answers both colours: its own moves, one at a time
            snapshots.append(env.clone_state())
            env.step(player.act(env))
            env.step(mine.act(env))
        env.step(player.act(env))
        assert agrees()
        env.restore_state(snapshots[3])  # back in its game: the game again up to there
        env.step(player.act(env))
        assert agrees() and len(player._moves) == 7
        other.reset(seed=1)
        for _ in range(9):
            other.step(mine.act(other))
        env.restore_state(other.clone_state())  # a position it never saw: set up stone by stone
        env.step(player.act(env))
        assert agrees() and len(player._moves) == 1
        env.reset()  # a new game: clear_board
        env.step(player.act(env))
        assert agrees() and env.board.sum() == 1


def test_gnugo_spec_in_the_arena(gnugo: str, capsys: pytest.CaptureFixture) -> None:
    before = set(children())  # earlier tests' children (a forkserver ...) are not ours to judge
    spec = "gtp:" + " ".join(GNUGO_ARGS)
    stats = arena("go", spec, "random", games=2, progress=False)
    assert stats["wins"] + stats["draws"] + stats["losses"] == 2
    assert set(children()) - before == set()  # every game's engine was ended


def test_gtp_spec_is_checked_without_starting_the_program() -> None:
    player = parse(f"gtp:{sys.executable} -m mc_envs.cli gtp")
    assert player.pid is None and player.argv == [sys.executable, "-m", "mc_envs.cli", "gtp"]
    with pytest.raises(ValueError, match="no program 'no-such-engine'"):
        parse("gtp:no-such-engine --gtp")
    with pytest.raises(ValueError, match="command line is empty"):
        gym.make("mc_envs/Go-v0", opponent="gtp:  ")


# -- broken engines -------------------------------------------------------------------------------

FAKE = """
import sys
genmoves = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "genmove":
        genmoves += 1
        if genmoves > {dies_after}:
            sys.exit(3)
        sys.stdout.write("= {answer}\\n\\n")
    elif words[0] == "quit":
        break
    elif words[0] == "protocol_version":
        sys.stdout.write("= 2\\n\\n")
    else:
        sys.stdout.write("= \\n\\n")
    sys.stdout.flush()
"""


def fake_engine(tmp_path: Path, answer: str = "pass", dies_after: int = 99) -> str:
    script = tmp_path / "fake_engine.py"
    script.write_text(textwrap.dedent(FAKE.format(answer=answer, dies_after=dies_after)))
    return f"{sys.executable} {script}"


def first_stone(env) -> int:
    return int(env.unwrapped.legal_actions()[0])


def test_an_engine_that_dies_ends_the_game_with_a_clear_error(tmp_path: Path) -> None:
    command = fake_engine(tmp_path, dies_after=2)
    env = gym.make("mc_envs/Go-v0", opponent=f"gtp:{command}", illegal_action="raise")
    env.reset(seed=0)
    env.step(first_stone(env))
    player = env.unwrapped._opponent.__self__
    pid = player.pid
    assert pid in children()
    env.step(first_stone(env))
    with pytest.raises(GtpError) as caught:
        env.step(first_stone(env))
    message = str(caught.value)
    assert "fake_engine.py" in message and "died (it exited with code 3)" in message
    assert "at command 'genmove w'" in message
    assert pid not in children() and player.pid is None


def test_garbage_resign_and_silence(tmp_path: Path) -> None:
    before = set(children())
    env = gym.make("mc_envs/Go-v0", illegal_action="raise").unwrapped
    env.reset(seed=0)
    with GtpPlayer(fake_engine(tmp_path, answer="Z99")) as player:
        with pytest.raises(GtpError, match="answered genmove with 'z99', not a vertex"):
            player.act(env)
        assert player.pid is None
    with GtpPlayer(fake_engine(tmp_path, answer="resign")) as player:
        assert player.act(env) == 81 and player.resigned
        env.step(81)
        env.step(first_stone(env))
        assert player.act(env) == 81  # passes on without asking
    hang = tmp_path / "hang.py"
    hang.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    player = GtpPlayer([sys.executable, str(hang)], timeout=0.5)
    with pytest.raises(
        GtpError, match="gave no answer within 0.5 s, at command 'protocol_version'"
    ):
        player.start()
    assert set(children()) - before == set()
