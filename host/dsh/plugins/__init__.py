"""Plugins: hook specifications, the one hook caller, the loader and overlays (docs/DESIGN.md §7).

- `hookspecs`: every `dsh_*` hook, with when it is called and what it returns;
- `hooks`: `Hooks`, the one caller (pluggy's order, failures contained per plugin);
- `context`: `PluginContext` and `ClientModule`, what a plugin is given and ships;
- `loader`: discovery through the `dsh.plugins` entry points, loading, unloading;
- `overlay`: the overlay file, the allowlist of plugins and the `[host]` settings;
- `actions`, `commands`: the contracts of a person's actions and of plugin commands.

The entry-point group is named `dsh.plugins` too; that name is public and
unrelated to this package's.
"""
