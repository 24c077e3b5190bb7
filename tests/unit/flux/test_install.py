"""Install: the chart values for each ``InstallOptions``, without Pulumi."""

from __future__ import annotations

from gitops_infra.components.flux.install import InstallOptions, install_values
from gitops_infra.defaults import DEFAULT_COMPONENTS, FluxComponent, image_automation_enabled


def test_install_values_switch_every_controller_explicitly() -> None:
    values = install_values(InstallOptions())
    assert values["installCRDs"] is True
    assert values["policies"] == {"create": True}
    assert {key: v["create"] for key, v in values.items() if key.endswith(("Controller", "Watcher"))} == {
        "sourceController": True,
        "kustomizeController": True,
        "helmController": True,
        "notificationController": True,
        "imageReflectionController": False,
        "imageAutomationController": False,
        "sourceWatcher": False,
    }


def test_install_values_extra_components_policy_and_tolerations() -> None:
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    values = install_values(
        InstallOptions(
            components=(FluxComponent.SOURCE_CONTROLLER, FluxComponent.KUSTOMIZE_CONTROLLER),
            components_extra=(
                FluxComponent.IMAGE_REFLECTOR_CONTROLLER,
                FluxComponent.IMAGE_AUTOMATION_CONTROLLER,
            ),
            network_policy=False,
            tolerations=[toleration],
        )
    )
    assert values["policies"] == {"create": False}
    assert values["helmController"] == {"create": False, "tolerations": [toleration]}
    assert values["imageAutomationController"] == {"create": True, "tolerations": [toleration]}


def test_tolerations_reach_the_pre_install_job_too() -> None:
    # The chart's `flux check --pre` Job is placed through `cli`, not through any controller's values:
    # without it, the Job stays Pending on a cluster whose only nodes are tainted, and the install fails.
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    assert install_values(InstallOptions(tolerations=[toleration]))["cli"] == {"tolerations": [toleration]}


def test_placement_reaches_every_controller_and_the_pre_install_job() -> None:
    toleration = {"key": "CriticalAddonsOnly", "operator": "Exists"}
    values = install_values(InstallOptions(tolerations=[toleration], node_selector={"role": "system"}))
    controllers = [key for key in values if key.endswith(("Controller", "Watcher"))]
    assert len(controllers) == 7
    for key in controllers:
        assert values[key]["tolerations"] == [toleration], key
        assert values[key]["nodeSelector"] == {"role": "system"}, key
    # The chart's `flux check --pre` Job is placed through `cli`, not through any controller's values.
    assert values["cli"] == {"tolerations": [toleration], "nodeSelector": {"role": "system"}}
    assert "cli" not in install_values(InstallOptions())


def test_image_automation_is_what_makes_flux_write() -> None:
    assert image_automation_enabled([FluxComponent.IMAGE_AUTOMATION_CONTROLLER]) is True
    assert image_automation_enabled([FluxComponent.IMAGE_REFLECTOR_CONTROLLER]) is False
    assert image_automation_enabled(DEFAULT_COMPONENTS) is False


def test_with_tenants_flux_is_locked_down_and_every_value_it_leans_on_is_stated() -> None:
    assert "multitenancy" not in install_values(InstallOptions())  # no tenants, the chart as it comes
    values = install_values(InstallOptions(multi_tenancy=True, tolerations=[{"operator": "Exists"}]))
    # chart 2.18.3: enabled adds --no-cross-namespace-refs=true and --default-service-account=<this>.
    assert values["multitenancy"] == {"enabled": True, "defaultServiceAccount": "default", "privileged": True}
    # The root Kustomization applies as kustomize-controller: its cluster-admin binding must stay.
    assert values["rbac"] == {"create": True, "createAggregation": True, "roleRef": {"name": "cluster-admin"}}
    assert values["watchAllNamespaces"] is True  # tenants' objects live outside Flux's namespace
    # The chart has no value for remote bases: kustomize-controller gets the flag as an argument,
    # beside what it had already.
    assert values["kustomizeController"] == {
        "create": True,
        "tolerations": [{"operator": "Exists"}],
        "container": {"additionalArgs": ["--no-remote-bases=true"]},
    }
