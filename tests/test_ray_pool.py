"""RayPool's polling against a message board slow to answer (its actor's process starting on a
busy machine): a poll returns within its timeout, and the board's messages come at a later poll,
each once. Ray itself is replaced by a stand-in whose references become ready at set times (the
real cluster's tests are tests/test_cluster_ray.py)."""

import time

from mc_envs.agents.parallel.messages import Counted
from mc_envs.agents.parallel.pools import RayPool


class _Ref:
    def __init__(self, value, ready_at):
        self.value, self.ready_at = value, ready_at

    def ready(self):
        return time.perf_counter() >= self.ready_at


class _Ray:
    """ray.wait and ray.get over _Ref: get blocks until the reference is ready, as Ray's does."""

    def wait(self, refs, num_returns=1, timeout=None):
        end = time.perf_counter() + (timeout or 0.0)
        while sum(r.ready() for r in refs) < num_returns and time.perf_counter() < end:
            time.sleep(0.001)
        return [r for r in refs if r.ready()], [r for r in refs if not r.ready()]

    def get(self, ref):
        while not ref.ready():
            time.sleep(0.001)
        return ref.value


class _Board:
    """A board whose first answer comes ``late`` seconds after it is asked, the others at once."""

    def __init__(self, late, messages):
        self.asked, self.late, self.messages = 0, late, messages
        board = self

        class _Drain:
            @staticmethod
            def remote():
                board.asked += 1
                delay = board.late if board.asked == 1 else 0.0
                out, board.messages = board.messages, []
                return _Ref(out, time.perf_counter() + delay)

        self.drain = _Drain


def _pool(board):
    pool = RayPool.__new__(RayPool)  # no cluster: the parts poll reads
    pool.ray, pool.board, pool._drain = _Ray(), board, None
    pool.pending = {0: _Ref(None, float("inf"))}  # a task still searching
    return pool


def test_a_poll_waits_for_its_tasks_only_and_the_late_boards_messages_come_later_once():
    said = [Counted(task=0, playouts=7)]
    board = _Board(late=0.6, messages=said)
    pool = _pool(board)
    start = time.perf_counter()
    messages, finished = pool.poll(0.02)
    assert messages == [] and finished == {}  # a poll that waited for the board would have them
    heard = []
    while time.perf_counter() - start < 3 and not heard:
        heard, _ = pool.poll(0.02)
    assert heard == said and time.perf_counter() - start >= 0.6
    assert board.asked == 1  # no second question while the first was unanswered
    assert pool.poll(0.02) == ([], {}) and board.asked == 2  # then asked again, at once answered


def test_a_board_that_answers_at_once_is_read_in_the_same_poll():
    said = [Counted(task=0, playouts=3)]
    pool = _pool(_Board(late=0.0, messages=said))
    assert pool.poll(0.02) == (said, {})
