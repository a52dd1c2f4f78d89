/*
Copyright 2026 The rackwire Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cniconf

import "fmt"

// What an IPAMClaim of rackwire's VM controller carries, read by the controller, the
// launcher-pod webhook and the CNI plugin.
const (
	// ClaimVMLabel names the VM (or VMI) a claim is for (KubeVirt's kubevirt.io/vm).
	ClaimVMLabel = "kubevirt.io/vm"
	// ClaimNADAnnotation records the NetworkAttachmentDefinition ("<namespace>/<name>") the
	// VM names for the claim's network: two NADs may share a CNI network name and disagree
	// on its ranges, so spec.network alone does not say where the addresses come from.
	ClaimNADAnnotation = "rackwire.metal3.io/network-attachment-definition"
)

// Claim is what decides whether a VM's pod may take a claim's addresses.
type Claim struct {
	Name     string
	Deleting bool
	// VM is the claim's ClaimVMLabel; Controller the name of the VirtualMachine or
	// VirtualMachineInstance that controls it ("" for none), ControllerKind its kind.
	VM, Controller, ControllerKind string
	// NAD is the claim's ClaimNADAnnotation ("" on claims made before it was recorded).
	NAD string
}

// Refusal says why a launcher pod of VM vm, attached through NAD nad ("<namespace>/<name>"),
// may not take the claim's addresses; "" when it may. A name is not an owner: claim names
// collide ("db" on "prod_net" and "db.prod" on "net"), so the controller is checked too.
func (c Claim) Refusal(vm, nad string) string {
	vmKind := c.ControllerKind == "VirtualMachine" || c.ControllerKind == "VirtualMachineInstance"
	switch {
	case c.Deleting:
		return fmt.Sprintf("IPAMClaim %s is being deleted: its addresses are being released", c.Name)
	case c.Controller == "" || !vmKind:
		return fmt.Sprintf("IPAMClaim %s is controlled by no VirtualMachine: rackwire serves only the claims its VM controller makes", c.Name)
	case vm == "":
		return fmt.Sprintf("IPAMClaim %s belongs to %s %s, and the pod is no virt-launcher pod of it", c.Name, c.ControllerKind, c.Controller)
	case c.Controller != vm || c.VM != vm:
		return fmt.Sprintf("IPAMClaim %s belongs to %s %s, not to VM %s (their claim names collide)", c.Name, c.ControllerKind, c.Controller, vm)
	case c.NAD != "" && c.NAD != nad:
		return fmt.Sprintf("IPAMClaim %s was made for NetworkAttachmentDefinition %s, not %s", c.Name, c.NAD, nad)
	}
	return ""
}
