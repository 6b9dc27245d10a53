#!/usr/bin/env bash
# The review step of action.yml, also run by tests/action.rs without GitHub. Inputs come as
# INPUT_PATH, INPUT_BASE_REF, INPUT_FAIL_ON and INPUT_CHARTS; GitHub's GITHUB_STEP_SUMMARY and
# GITHUB_OUTPUT are used when set. Runs the review twice from the same chart cache: as Markdown
# (kept in a file, and appended to the step summary by trainer-audit itself), then as workflow
# commands (the inline annotations). Exits with trainer-audit's code: 0 ready, 1 blocked, 2 the
# review could not run.
set -uo pipefail

bin=${TRAINER_AUDIT_BIN:-trainer-audit}
path=${INPUT_PATH:-.}
fail_on=${INPUT_FAIL_ON:-error}
report=${RUNNER_TEMP:-${TMPDIR:-/tmp}}/trainer-audit-review.md

case $fail_on in
  error | warning | info) ;;
  *)
    echo "::error title=trainer-audit::fail-on must be error, warning or info, not '$fail_on'"
    exit 2
    ;;
esac

args=(gitops "$path" --fail-on "$fail_on")
if [[ -n ${INPUT_BASE_REF:-} ]]; then
  args+=(--base-ref "$INPUT_BASE_REF")
fi
if [[ -n ${INPUT_CHARTS:-} ]]; then
  args+=(--charts "$INPUT_CHARTS")
fi

"$bin" "${args[@]}" --format markdown >"$report"
code=$?
if [[ $code -le 1 ]]; then
  # The annotations; the summary is already written.
  GITHUB_STEP_SUMMARY='' "$bin" "${args[@]}" --format github
fi

case $code in
  0) verdict=ready ;;
  1) verdict=blocked ;;
  *) verdict=failed ;;
esac
if [[ -n ${GITHUB_OUTPUT:-} ]]; then
  {
    echo "verdict=$verdict"
    echo "exit-code=$code"
    echo "report=$report"
  } >>"$GITHUB_OUTPUT"
fi
if [[ $code -ge 2 ]]; then
  echo "::error title=trainer-audit::the GitOps review could not run (exit $code); see the log above"
fi
exit "$code"
