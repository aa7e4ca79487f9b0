# Shared by scripts/test and scripts/run: one virtual environment in .venv with
# the host and every plugin distribution installed in editable mode.

dsh_install() {
  local extra="${1:-}"
  local py="${PYTHON:-python3}"
  if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv with $($py --version)"
    "$py" -m venv .venv
  fi
  # Editable installs follow source changes by themselves: only the dependency
  # files (every pyproject.toml) and the Python need a reinstall. A stamp of
  # them per set of extras skips pip when nothing changed (pip's no-op takes
  # seconds; this takes milliseconds). DSH_REINSTALL=1 installs regardless.
  local stamp
  stamp="$(dsh_stamp)"
  local stamp_file=".venv/.dsh-installed${extra:+-${extra//,/-}}"
  if [ -z "${DSH_REINSTALL:-}" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    echo "== .venv is up to date (no pyproject.toml changed; DSH_REINSTALL=1 reinstalls)"
    return 0
  fi
  local spec="."
  [ -n "$extra" ] && spec=".[$extra]"
  local args=(-e "$spec")
  local plugin
  for plugin in plugins/*/; do
    [ -f "$plugin/pyproject.toml" ] && args+=(-e "$plugin")
  done
  echo "== installing ${args[*]}"
  .venv/bin/python -m pip install -q --disable-pip-version-check "${args[@]}"
  echo "$stamp" >"$stamp_file"
  # What the extras install includes the base install.
  [ -n "$extra" ] && echo "$stamp" >.venv/.dsh-installed
  return 0
}

# The stamp of what an install depends on: the Python, and every pyproject.toml
# (names and contents, so a new or removed plugin counts too).
dsh_stamp() {
  {
    .venv/bin/python --version 2>&1
    local file
    for file in pyproject.toml plugins/*/pyproject.toml; do
      [ -f "$file" ] && echo "$file" && cat "$file"
    done
  } | sha256sum | cut -d' ' -f1
}

# The browser scenario needs Debian's chromium; Playwright's own download does
# not work on these machines. Install it when we can (root with apt-get), with
# the emoji and CJK fonts the UI's 🔔 and 中文 need to render as glyphs.
dsh_ensure_chromium() {
  local fonts="fonts-noto-color-emoji fonts-noto-cjk"
  if [ -x /usr/bin/chromium ] && fc-list 2>/dev/null | grep -qi "Noto Color Emoji"; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing Debian's chromium and fonts for the browser tests"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    # Fonts only make screenshots legible; their absence must not stop the tests.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $fonts >/dev/null \
      || echo "!! could not install $fonts: screenshots may show boxes for emoji and CJK" >&2
  elif [ ! -x /usr/bin/chromium ]; then
    echo "!! /usr/bin/chromium is missing: install Debian's chromium (apt-get install chromium)" >&2
    return 1
  fi
}

# The PostgreSQL tests start a real server (initdb + pg_ctl in a temporary
# directory, tests/support/postgres.py): install Debian's package when the
# server binaries are missing, like chromium.
dsh_ensure_postgres() {
  if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null; then
    return 0
  fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing Debian's postgresql for the PostgreSQL tests"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  else
    echo "!! PostgreSQL's server binaries are missing: install Debian's postgresql" >&2
    return 1
  fi
}
