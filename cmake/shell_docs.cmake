# Writes the shell completions and the man page by running the built k3plan (its command table is
# the one source): cmake -DK3PLAN=<binary> -DOUT_DIR=<dir> -P shell_docs.cmake
function(k3plan_doc out)
  execute_process(COMMAND ${K3PLAN} ${ARGN} OUTPUT_FILE ${OUT_DIR}/${out} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "k3plan ${ARGN} failed (${rc})")
  endif()
endfunction()
k3plan_doc(k3plan.bash completion bash)
k3plan_doc(_k3plan completion zsh)
k3plan_doc(k3plan.fish completion fish)
k3plan_doc(k3plan.1 man)
