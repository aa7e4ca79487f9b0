// UI plugins: import every module listed by /api/client-modules and let it
// fill the event-view registry. One broken plugin costs only its own views.

/**
 * Load `modules` (`[{plugin, url, eventTypes}]`). Each is imported with
 * `importModule(url)` and its `register(registry)` called with a facade that
 * stamps the plugin name on registration errors. Resolves to one
 * `{plugin, ok, error?}` per module, in the listed order.
 */
export async function loadClientModules({
  modules,
  registry,
  importModule = (url) => import(url),
}) {
  const imported = await Promise.allSettled(modules.map((module) => importModule(module.url)));
  const results = [];
  modules.forEach((module, index) => {
    const plugin = String(module.plugin ?? module.url);
    const outcome = imported[index];
    if (outcome.status === "rejected") {
      results.push({ plugin, ok: false, error: outcome.reason });
      return;
    }
    const register = outcome.value?.register;
    if (typeof register !== "function") {
      results.push({ plugin, ok: false, error: new TypeError(`${plugin}: module has no register(registry)`) });
      return;
    }
    try {
      register(registry.forPlugin(plugin));
      results.push({ plugin, ok: true });
    } catch (error) {
      results.push({ plugin, ok: false, error });
    }
  });
  return results;
}
