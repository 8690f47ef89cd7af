# Writes OUTPUT (a header defining LOCKSTEP_BUILD_COMMIT) from the checkout's
# commit, at every build, and touches it only when the text changes, so that a
# new commit relinks the binaries with the right `--version` and an unchanged
# one recompiles nothing. COMMIT (from -DLOCKSTEP_COMMIT=...) wins: a package
# built from a tarball has no .git to ask. "unknown" when neither says.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... [-DCOMMIT=...] -P build_commit.cmake
set(commit "${COMMIT}")
if(commit STREQUAL "")
  find_program(GIT git)
  if(GIT AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0)
      set(commit "")
    else()
      # Uncommitted changes to tracked files: the binary is not that commit.
      execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" diff --quiet HEAD --
                      RESULT_VARIABLE dirty ERROR_QUIET)
      if(NOT dirty EQUAL 0)
        string(APPEND commit "-dirty")
      endif()
    endif()
  endif()
endif()
if(commit STREQUAL "")
  set(commit "unknown")
endif()
file(WRITE "${OUTPUT}.tmp" "#define LOCKSTEP_BUILD_COMMIT \"${commit}\"\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
