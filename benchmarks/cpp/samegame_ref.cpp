// SameGame in plain C++: the reference that benchmarks/samegame_bench.py compiles (g++ -O2) and
// runs beside mc-envs, so that both sides of each ratio are measured in the same run.
//
// The rules are mc-envs's (mc_envs/games/samegame.py), without a leftover penalty: a move removes a
// 4-connected group of n >= 2 cells of one colour for (n - 2)^2 points, cells fall down, an empty
// column is removed and the columns to its right move left, clearing the board adds 1000, and the
// game ends when no group of two cells is left. Moves are named as mc-envs names them: the action
// r * C + c of the group's cell in the top-most row (r = 0 at the top), left-most there, on a board
// of R rows and C columns. A straightforward implementation: a flood fill lists the groups at
// every move; no bitboards, no incremental updates.
//
//   samegame_ref BOARD playouts N REPS POLICY   playouts/s of REPS reps of N (after one warm-up rep)
//   samegame_ref BOARD nmcs LEVEL SEED POLICY   one complete NMCS of that level, with memorisation
//   samegame_ref BOARD replay < ACTIONS         plays the actions, one JSON line per position
//
// BOARD is a text file in mc-envs's format: one line per row, top row first, one digit per cell
// (colours 0..9), '.' or '-' for an empty cell; blank lines and lines starting with '#' are skipped.
// POLICY is "random" (uniform over the groups) or "tabu" (TabuColorRandom, Schadd et al. 2008: the
// colour with the most cells when the playout starts, the lowest on ties, is played only when
// nothing else is left). Each mode prints one JSON object a line on stdout; errors go to stderr
// (exit 2 for bad arguments or input, 1 for an illegal action).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kMaxSide = 64;                 // mc-envs accepts boards of 1..64 rows and columns
constexpr int kMaxCells = kMaxSide * kMaxSide;
constexpr int kClearBonus = 1000;
constexpr int kMaxColours = 10;

// The board as columns of stacked cells. colour[c * kMaxSide + h] is the colour (1..10) of the cell
// at height h (0 = bottom) of column c, valid for h < height[c]; columns 0..used-1 are non-empty.
struct Board {
    int rows = 0, cols = 0;  // the size the game started with: actions are r * cols + c
    int used = 0;
    int cells = 0;
    int score = 0;
    uint8_t height[kMaxSide] = {};
    uint8_t colour[kMaxCells] = {};
};

// The groups of two or more cells of a position, in the order a column-by-column scan finds them.
struct Groups {
    int count = 0;
    int16_t cell[kMaxCells];    // one cell of the group (c * kMaxSide + h)
    int16_t action[kMaxCells];  // the group's action
    uint8_t colour[kMaxCells];
};

struct Pcg32 {  // O'Neill's PCG-XSH-RR
    uint64_t state, inc;
    Pcg32(uint64_t seed, uint64_t stream) : state(0), inc((stream << 1u) | 1u) {
        next();
        state += seed;
        next();
    }
    uint32_t next() {
        uint64_t old = state;
        state = old * 6364136223846793005ULL + inc;
        uint32_t shifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
        uint32_t rot = (uint32_t)(old >> 59u);
        return (shifted >> rot) | (shifted << ((-rot) & 31u));
    }
    int below(int n) { return (int)(((uint64_t)next() * (uint64_t)n) >> 32); }  // 0..n-1
};

class Searcher {
  public:
    // Lists the groups of b into g.
    void list_groups(const Board& b, Groups& g) {
        new_stamp();
        g.count = 0;
        for (int c = 0; c < b.used; c++) {
            for (int h = 0; h < b.height[c]; h++) {
                int cell = c * kMaxSide + h;
                if (seen_[cell] == stamp_) continue;
                int action;
                int size = flood(b, cell, &action);
                if (size >= 2) {
                    g.cell[g.count] = (int16_t)cell;
                    g.action[g.count] = (int16_t)action;
                    g.colour[g.count] = b.colour[cell];
                    g.count++;
                }
            }
        }
    }

    // The cell of an action on b, or -1 when the action names no cell of b.
    static int cell_of(const Board& b, int action) {
        if (action < 0 || action >= b.rows * b.cols) return -1;
        int c = action % b.cols, h = b.rows - 1 - action / b.cols;
        return (c < b.used && h < b.height[c]) ? c * kMaxSide + h : -1;
    }

    // The size of the group holding cell (found by a flood fill from it).
    int group_size(const Board& b, int cell) {
        new_stamp();
        int action;
        return flood(b, cell, &action);
    }

    // Removes the group holding cell (of two cells or more) and scores it.
    void remove(Board& b, int cell) {
        const uint8_t colour = b.colour[cell];
        int lo = cell / kMaxSide, hi = lo, n = 0, top = 0;
        b.colour[cell] = 0;
        stack_[top++] = (int16_t)cell;
        while (top > 0) {
            int p = stack_[--top];
            int c = p / kMaxSide, h = p % kMaxSide;
            n++;
            lo = std::min(lo, c);
            hi = std::max(hi, c);
            if (c > 0 && h < b.height[c - 1] && b.colour[p - kMaxSide] == colour) take(b, p - kMaxSide, top);
            if (c + 1 < b.used && h < b.height[c + 1] && b.colour[p + kMaxSide] == colour) take(b, p + kMaxSide, top);
            if (h > 0 && b.colour[p - 1] == colour) take(b, p - 1, top);
            if (h + 1 < b.height[c] && b.colour[p + 1] == colour) take(b, p + 1, top);
        }
        for (int c = lo; c <= hi; c++) {  // the cells left in each touched column fall down
            uint8_t* column = b.colour + c * kMaxSide;
            int kept = 0;
            for (int h = 0; h < b.height[c]; h++)
                if (column[h] != 0) column[kept++] = column[h];
            b.height[c] = (uint8_t)kept;
        }
        int to = lo;  // the empty columns close up to the left
        for (int c = lo; c < b.used; c++) {
            if (b.height[c] == 0) continue;
            if (to != c) {
                std::memcpy(b.colour + to * kMaxSide, b.colour + c * kMaxSide, b.height[c]);
                b.height[to] = b.height[c];
                b.height[c] = 0;
            }
            to++;
        }
        b.used = to;
        b.cells -= n;
        b.score += (n - 2) * (n - 2);
        if (b.cells == 0) b.score += kClearBonus;
    }

    // Plays random groups to the end (policy 0: uniform; 1: TabuColorRandom). Appends the actions
    // to moves when it is not null; returns the final score.
    int playout(Board& b, int policy, Pcg32& rng, std::vector<int16_t>* moves) {
        int tabu = policy == 1 ? tabu_colour(b) : -1;
        for (;;) {
            list_groups(b, groups_);
            if (groups_.count == 0) return b.score;
            int pick = -1;
            if (tabu >= 0) {
                int allowed = 0;
                for (int i = 0; i < groups_.count; i++)
                    if (groups_.colour[i] != tabu) candidates_[allowed++] = (int16_t)i;
                if (allowed > 0) pick = candidates_[rng.below(allowed)];
            }
            if (pick < 0) pick = rng.below(groups_.count);
            if (moves) moves->push_back(groups_.action[pick]);
            remove(b, groups_.cell[pick]);
        }
    }

    long long playouts = 0;

  private:
    void new_stamp() {
        if (++stamp_ == 0) {  // wrapped around: forget every old mark
            std::memset(seen_, 0, sizeof seen_);
            stamp_ = 1;
        }
    }

    // Marks the group of cell as seen; returns its size and sets *action to its action.
    int flood(const Board& b, int cell, int* action) {
        const uint8_t colour = b.colour[cell];
        int top = 0, n = 0, best = kMaxCells * 2;
        seen_[cell] = stamp_;
        stack_[top++] = (int16_t)cell;
        while (top > 0) {
            int p = stack_[--top];
            int c = p / kMaxSide, h = p % kMaxSide;
            n++;
            best = std::min(best, (b.rows - 1 - h) * b.cols + c);
            if (c > 0 && h < b.height[c - 1]) visit(b, p - kMaxSide, colour, top);
            if (c + 1 < b.used && h < b.height[c + 1]) visit(b, p + kMaxSide, colour, top);
            if (h > 0) visit(b, p - 1, colour, top);
            if (h + 1 < b.height[c]) visit(b, p + 1, colour, top);
        }
        *action = best;
        return n;
    }

    void visit(const Board& b, int p, uint8_t colour, int& top) {
        if (b.colour[p] == colour && seen_[p] != stamp_) {
            seen_[p] = stamp_;
            stack_[top++] = (int16_t)p;
        }
    }

    void take(Board& b, int p, int& top) {
        b.colour[p] = 0;
        stack_[top++] = (int16_t)p;
    }

    static int tabu_colour(const Board& b) {
        int counts[kMaxColours + 1] = {};
        for (int c = 0; c < b.used; c++)
            for (int h = 0; h < b.height[c]; h++) counts[b.colour[c * kMaxSide + h]]++;
        int best = 1;
        for (int k = 2; k <= kMaxColours; k++)
            if (counts[k] > counts[best]) best = k;
        return best;
    }

    uint32_t seen_[kMaxCells] = {};
    uint32_t stamp_ = 0;
    int16_t stack_[kMaxCells];
    int16_t candidates_[kMaxCells];
    Groups groups_;
};

// Nested Monte Carlo Search (Cazenave 2009) with memorisation of the best sequence: at each step
// every move is tried and followed by a search one level down (a playout at level 1); the best
// sequence seen so far is kept and its next move is played. Returns the score of the best sequence.
int nmcs(Searcher& s, const Board& start, int level, int policy, Pcg32& rng,
         std::vector<int16_t>& best_moves) {
    Board b = start;
    auto groups = std::make_unique<Groups>();
    std::vector<int16_t> moves, tail;
    int best = -1;
    best_moves.clear();
    for (int played = 0;; played++) {
        s.list_groups(b, *groups);
        if (groups->count == 0) break;
        for (int i = 0; i < groups->count; i++) {
            Board child = b;
            s.remove(child, groups->cell[i]);
            tail.clear();
            int score;
            if (level <= 1) {
                score = s.playout(child, policy, rng, &tail);
                s.playouts++;
            } else {
                score = nmcs(s, child, level - 1, policy, rng, tail);
            }
            if (score > best) {
                best = score;
                best_moves.assign(moves.begin(), moves.end());
                best_moves.push_back(groups->action[i]);
                best_moves.insert(best_moves.end(), tail.begin(), tail.end());
            }
        }
        int next = best_moves[played];
        moves.push_back((int16_t)next);
        s.remove(b, Searcher::cell_of(b, next));
    }
    if (best < 0) best = b.score;  // no move at all
    return best;
}

[[noreturn]] void fail(int code, const std::string& message) {
    std::fprintf(stderr, "samegame_ref: %s\n", message.c_str());
    std::exit(code);
}

Board read_board(const char* path) {
    FILE* f = std::fopen(path, "r");
    if (!f) fail(2, std::string("cannot read the board file ") + path);
    std::vector<std::string> rows;
    char line[1024];
    int lineno = 0;
    while (std::fgets(line, sizeof line, f)) {
        lineno++;
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
            text.pop_back();
        size_t first = text.find_first_not_of(' ');
        if (first == std::string::npos || text[first] == '#') continue;
        text = text.substr(first);
        for (size_t i = 0; i < text.size(); i++) {
            char ch = text[i];
            if (!(ch == '.' || ch == '-' || (ch >= '0' && ch <= '9')))
                fail(2, std::string(path) + ": line " + std::to_string(lineno) + ", column " +
                            std::to_string(i + 1) + ": bad symbol '" + ch + "'");
        }
        if (!rows.empty() && text.size() != rows[0].size())
            fail(2, std::string(path) + ": line " + std::to_string(lineno) + ": a row of " +
                        std::to_string(text.size()) + " cells, the first has " +
                        std::to_string(rows[0].size()));
        rows.push_back(text);
    }
    std::fclose(f);
    if (rows.empty()) fail(2, std::string(path) + ": no board rows");
    int R = (int)rows.size(), C = (int)rows[0].size();
    if (R > kMaxSide || C > kMaxSide)
        fail(2, std::string(path) + ": " + std::to_string(R) + " x " + std::to_string(C) +
                    " cells, at most 64 x 64");
    Board b;
    b.rows = R;
    b.cols = C;
    for (int c = 0; c < C; c++) {  // cells fall down and empty columns close up as the board is laid
        int h = 0;
        for (int r = R - 1; r >= 0; r--) {
            char ch = rows[r][c];
            if (ch >= '0' && ch <= '9') b.colour[b.used * kMaxSide + h++] = (uint8_t)(ch - '0' + 1);
        }
        b.height[b.used] = (uint8_t)h;
        b.cells += h;
        if (h > 0) b.used++;
    }
    return b;
}

int int_arg(int argc, char** argv, int i, const char* name, int low) {
    if (i >= argc) fail(2, std::string("missing ") + name);
    char* end;
    long v = std::strtol(argv[i], &end, 10);
    if (*end != 0 || v < low || v > 1000000000)
        fail(2, std::string(name) + " must be an integer >= " + std::to_string(low) + ", got " + argv[i]);
    return (int)v;
}

int policy_arg(int argc, char** argv, int i) {
    if (i >= argc) fail(2, "missing POLICY (random or tabu)");
    if (std::strcmp(argv[i], "random") == 0) return 0;
    if (std::strcmp(argv[i], "tabu") == 0) return 1;
    fail(2, std::string("POLICY must be random or tabu, got ") + argv[i]);
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void print_position(Searcher& s, const Board& b, Groups& g) {
    s.list_groups(b, g);
    std::vector<int> legal(g.action, g.action + g.count);
    std::sort(legal.begin(), legal.end());
    std::printf("{\"score\": %d, \"cells\": %d, \"legal\": [", b.score, b.cells);
    for (size_t i = 0; i < legal.size(); i++) std::printf(i ? ", %d" : "%d", legal[i]);
    std::printf("]}\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: %s BOARD playouts N REPS POLICY\n"
                     "       %s BOARD nmcs LEVEL SEED POLICY\n"
                     "       %s BOARD replay < ACTIONS\n",
                     argv[0], argv[0], argv[0]);
        return 2;
    }
    const Board start = read_board(argv[1]);
    const std::string mode = argv[2];
    auto searcher = std::make_unique<Searcher>();
    if (mode == "playouts") {
        int n = int_arg(argc, argv, 3, "N", 1), reps = int_arg(argc, argv, 4, "REPS", 1);
        int policy = policy_arg(argc, argv, 5);
        Pcg32 rng(12345, 1);
        std::vector<double> rates;
        long long total = 0;
        for (int rep = 0; rep <= reps; rep++) {  // rep 0 warms the caches up and is not counted
            total = 0;
            double t0 = now();
            for (int i = 0; i < n; i++) {
                Board b = start;
                total += searcher->playout(b, policy, rng, nullptr);
            }
            double dt = now() - t0;
            if (rep > 0) rates.push_back(n / dt);
        }
        std::vector<double> sorted = rates;
        std::sort(sorted.begin(), sorted.end());
        std::printf("{\"mode\": \"playouts\", \"policy\": \"%s\", \"playouts\": %d, \"reps\": %d, "
                    "\"per_s_median\": %.1f, \"per_s_min\": %.1f, \"per_s_max\": %.1f, "
                    "\"mean_score\": %.2f}\n",
                    argv[5], n, reps, sorted[sorted.size() / 2], sorted.front(), sorted.back(),
                    (double)total / n);
    } else if (mode == "nmcs") {
        int level = int_arg(argc, argv, 3, "LEVEL", 1), seed = int_arg(argc, argv, 4, "SEED", 0);
        int policy = policy_arg(argc, argv, 5);
        Pcg32 rng((uint64_t)seed, 54);
        std::vector<int16_t> moves;
        double t0 = now();
        int score = nmcs(*searcher, start, level, policy, rng, moves);
        double dt = now() - t0;
        Board check = start;  // the sequence replays to its score
        for (int16_t a : moves) searcher->remove(check, Searcher::cell_of(check, a));
        if (check.score != score) fail(1, "the best sequence does not replay to its score");
        std::printf("{\"mode\": \"nmcs\", \"level\": %d, \"seed\": %d, \"policy\": \"%s\", "
                    "\"score\": %d, \"seconds\": %.4f, \"playouts\": %lld, \"actions\": [",
                    level, seed, argv[5], score, dt, searcher->playouts);
        for (size_t i = 0; i < moves.size(); i++) std::printf(i ? ", %d" : "%d", moves[i]);
        std::printf("]}\n");
    } else if (mode == "replay") {
        Board b = start;
        auto groups = std::make_unique<Groups>();
        print_position(*searcher, b, *groups);
        long action;
        for (int move = 1; std::scanf("%ld", &action) == 1; move++) {
            int cell = Searcher::cell_of(b, (int)action);
            if (cell < 0 || searcher->group_size(b, cell) < 2)
                fail(1, "move " + std::to_string(move) + ": action " + std::to_string(action) +
                            " is not a cell of a group of two or more");
            searcher->remove(b, cell);
            print_position(*searcher, b, *groups);
        }
        if (!std::feof(stdin)) fail(2, "the actions on stdin must be integers");
    } else {
        fail(2, "unknown mode " + mode + " (playouts, nmcs or replay)");
    }
    return 0;
}
