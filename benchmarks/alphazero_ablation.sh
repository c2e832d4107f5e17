#!/bin/bash
# Two AlphaZero training recipes side by side: two runs of 10 minutes, each pinned to one core with
# one thread, then each model (PUCT 200 simulations) against UCT 2,000 and 200 (100 games each) and
# on the solved positions.
#
#     bash benchmarks/alphazero_ablation.sh OUT_DIR NAME_A "FLAGS_A" NAME_B "FLAGS_B"
#
# from the repository root; FLAGS are alphazero_curve.py's options beyond the common ones below.
# The ablations whose reports are committed:
#
#     W="--window 50000 --mirror"
#     bash benchmarks/alphazero_ablation.sh runs/abl puct16 "--sims 16 $W" gumbel16 "--sims 16 --gumbel 16 $W"
#     bash benchmarks/alphazero_ablation.sh runs/pcr full80 "--sims 80 --opening 24 $W" cap80_20 \
#         "--sims 80 --opening 24 --cap-sims 20 --cap-share 0.25 $W"
#     bash benchmarks/alphazero_ablation.sh runs/mirror mirror "--sims 80 --opening 24 $W" \
#         plain "--sims 80 --opening 24 --window 50000"
#     bash benchmarks/alphazero_ablation.sh benchmarks/out/resnet mlp512 "--sims 80 --opening 24 $W" \
#         resnet32x2 "--sims 80 --opening 24 $W --net resnet --channels 32 --blocks 2"
#
# (benchmarks/results/alphazero_{gumbel,pcr,mirror,window,resnet}_ablation/). Needs 2 cores.
set -e
OUT=$1; A=$2; FLAGS_A=$3; B=$4; FLAGS_B=$5
if [ -z "$B" ]; then echo "usage: $0 OUT_DIR NAME_A FLAGS_A NAME_B FLAGS_B" >&2; exit 2; fi
PY=${PYTHON:-.venv/bin/python}
mkdir -p "$OUT"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
export XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
COMMON="--minutes 10 --net mlp --hidden 512 --games 256 --parallel 128 --steps 100
  --batch 512 --capacity 400000 --eval-every 100000"
# shellcheck disable=SC2086
taskset -c 0 $PY benchmarks/alphazero_curve.py $COMMON $FLAGS_A --model "$OUT/$A.npz" \
  --out "$OUT/${A}_curve.json" > "$OUT/$A.log" 2>&1 &
# shellcheck disable=SC2086
taskset -c 1 $PY benchmarks/alphazero_curve.py $COMMON $FLAGS_B --model "$OUT/$B.npz" \
  --out "$OUT/${B}_curve.json" > "$OUT/$B.log" 2>&1 &
wait
for arm in "$A" "$B"; do
  $PY benchmarks/alphazero_arena.py --model "$OUT/$arm.npz" --games 100 --opponents 2000 200 \
    --out "$OUT/${arm}_arena.json"
  $PY benchmarks/connect4_value_moves.py --model "$OUT/$arm.npz" --agents puct200_model \
    --out "$OUT/${arm}_value.json"
done
