"""One installation of the schedule plugin in one root agent.

An installation is the agent's ledger, its four tools and its owner, all
disposed together when the installation scope closes (the agent closed or the
plugin unloaded). Disposal, in order: refuse management operations that have
not started, stop the owner and await its task (cancelling a sleep, an idle
wait or an in-flight preflight), unregister the four tools, then await a
management operation already in flight. It never deletes a record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import ScheduleConfig
from .ledger import ScheduleLedger
from .owner import ReminderOwner
from .tools import schedule_tools

if TYPE_CHECKING:
    from dsh import Agent, Disposer, PluginContext

    from .alarm import Alarm
    from .budget import HostPacer
    from .cache import FoldCache
    from .measures import DeliveryMeasures

__all__ = ["InstallationError", "ScheduleInstallation", "install"]


class InstallationError(RuntimeError):
    """The plugin could not install in an agent; nothing of it stayed registered."""


class ScheduleInstallation:
    """The installed parts; `aclose` disposes them in order (see the module docstring)."""

    __slots__ = ("_agent", "_installations", "_ledger", "_owner", "_unregister")

    def __init__(
        self,
        agent: Agent,
        installations: dict[Agent, ScheduleInstallation],
        ledger: ScheduleLedger,
        owner: ReminderOwner,
        unregister: list[Disposer],
    ) -> None:
        self._agent = agent
        self._installations = installations
        self._ledger = ledger
        self._owner = owner
        self._unregister = unregister

    @property
    def ledger(self) -> ScheduleLedger:
        """The agent's reminders (what the plugin's actions manage)."""
        return self._ledger

    async def aclose(self) -> None:
        self._installations.pop(self._agent, None)  # an agent is installed in once
        self._ledger.close()
        await self._owner.aclose()
        _unregister_all(self._unregister)
        await self._ledger.drain()


def install(
    context: PluginContext[ScheduleConfig | None],
    agent: Agent,
    config: ScheduleConfig,
    alarm: Alarm,
    pacer: HostPacer,
    installations: dict[Agent, ScheduleInstallation],
    folds: FoldCache | None,
    measures: DeliveryMeasures,
) -> ScheduleInstallation:
    """Install the tools and the owner in `agent`, in one installation scope.

    The installation is entered in `installations` under `agent` until its
    scope closes (a plain dict, not a weak one: the installation refers to its
    agent, so a weak key would never die and every closed Session would stay).

    Every step that can fail runs before the scope exists, so a failure (a tool
    name already taken, a closed agent or plugin) is rolled back synchronously
    — the publication hook cannot await — and re-raised as `InstallationError`
    naming the plugin and the Session. The ledger starts from `folds`' fold of
    the Session's log when it holds one (a resume or a wake then folds only the
    events after it); the owner waits for its next target on `alarm` and takes
    its deliveries' share of the host's budget from `pacer`, and tells
    `measures` (`/metrics`) of each durable dispatch.
    """
    seed = None if folds is None else folds.seed(agent.session)
    ledger = ScheduleLedger(
        session=agent.session,
        live=agent.live,
        clock=agent.clock,
        config=config,
        fold=seed,
        fires_when_closed=context.wakes_cold_sessions,
    )
    # Plain lists, not ExitStacks: an armed Session keeps these (≈ 3 KB less each).
    unregister: list[Disposer] = []
    owner: ReminderOwner | None = None
    try:
        for tool in schedule_tools(ledger):
            unregister.append(agent.tools.register(tool))
        owner = ReminderOwner(agent, ledger, alarm, pacer, measures)
        scope = context.install(agent)
    except Exception as error:
        if owner is not None:
            owner.cancel()
        _unregister_all(unregister)
        raise InstallationError(
            f"plugin {context.name!r} (dsh-tool-schedule) could not install in session "
            f"{agent.session.id}: {type(error).__name__}: {error}"
        ) from error
    installation = ScheduleInstallation(agent, installations, ledger, owner, unregister)
    installations[agent] = installation
    scope.add(installation.aclose)
    return installation


def _unregister_all(unregister: list[Disposer]) -> None:
    while unregister:
        unregister.pop()()
