"""The pluggy plugin manager for the hooks that are not metrics."""

from __future__ import annotations

import attrs
import pluggy

from . import hookspecs
from ._entrypoints import EntryPointRef, autoload_enabled, entry_points, load
from ._exceptions import describe_exception

__all__ = ["PLUGINS_GROUP", "BrokenPlugin", "plugin_manager", "reset_plugin_manager"]

#: The entry-point group of plugins with hook implementations.
PLUGINS_GROUP = "itemscore.plugins"


@attrs.frozen
class BrokenPlugin:
    """A plugin from ``itemscore.plugins`` that failed to load or register."""

    #: The entry point that failed.
    ref: EntryPointRef
    #: The exception type and message.
    error: str


class ItemscorePluginManager(pluggy.PluginManager):
    """A ``PluginManager("itemscore")`` that remembers the plugins that failed to load."""

    def __init__(self) -> None:
        super().__init__("itemscore")
        self.add_hookspecs(hookspecs)
        #: Plugins from ``itemscore.plugins`` that failed to load or register.
        self.broken: list[BrokenPlugin] = []
        #: The entry point each plugin loaded from, by plugin name.
        self.sources: dict[str, EntryPointRef] = {}

    def load_entry_points(self, *, autoload: bool | None = None) -> None:
        """Load and register every plugin of ``itemscore.plugins``; record the broken ones.

        A plugin is named after its entry point; when two distributions use one entry-point
        name, the second is named ``<distribution>:<name>`` so that neither is dropped.
        """
        for ref in entry_points(PLUGINS_GROUP, autoload=autoload):
            if any(known == ref for known in self.sources.values()):
                continue
            name = ref.name
            if self.has_plugin(name) or name in self.sources:
                name = f"{ref.distribution}:{ref.name}"
            loaded = load(ref)
            if not loaded.ok:
                self.broken.append(BrokenPlugin(ref, loaded.error or ""))
                continue
            try:
                self.register(loaded.obj, name=name)
            except Exception as exc:  # noqa: BLE001 - one broken plugin never stops the others
                self.broken.append(BrokenPlugin(ref, describe_exception(exc, one_line=True)))
            else:
                self.sources[name] = ref


_PM: ItemscorePluginManager | None = None


def plugin_manager() -> ItemscorePluginManager:
    """The process-wide plugin manager, with the ``itemscore.plugins`` entry points loaded.

    Register in-process plugins with ``plugin_manager().register(obj)``.
    """
    global _PM
    if _PM is None:
        _PM = ItemscorePluginManager()
        _PM.load_entry_points(autoload=autoload_enabled())
    return _PM


def reset_plugin_manager() -> None:
    """Forget the plugin manager; the next call to :func:`plugin_manager` builds a new one."""
    global _PM
    _PM = None
