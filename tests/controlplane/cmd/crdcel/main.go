// Command crdcel reports what this Kubernetes version's apiextensions-apiserver says about CRDs:
// the estimated CEL cost of every x-kubernetes-validations rule (as the CRD validation computes
// it, cardinality included), the CRD's total, and the verdict of the CRD validation itself on a
// create, on an unchanged re-apply (an update with the same spec, as `helm upgrade` sends it),
// on a changed re-apply (the same spec with every version's root description edited) and, for
// two files naming the same CRD, on the update from the earlier file to the later one.
//
// It is trainer-audit's test tooling (the differential of its own CEL cost and environment
// verdict against Kubernetes', `cargo xtask kube-versions`); it calls the validation the API
// server runs, in process, so no etcd is needed. The compatibility version is the binary's
// (set with -ldflags -X k8s.io/component-base/version.gitVersion=vX.Y.Z, as kube-apiserver's).
//
// Usage: crdcel FILE... ; prints one JSON document.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/component-base/version"
)

type rule struct {
	// Path is the schema node in trainer-audit's notation: `spec.template[*].name`, `<root>`.
	Path        string `json:"path"`
	Rule        string `json:"rule"`
	MaxCost     uint64 `json:"maxCost"`
	Cardinality uint64 `json:"cardinality"`
	// Cost is what counts against StaticEstimatedCostLimit and the CRD total (maxCost x cardinality).
	Cost             uint64 `json:"cost"`
	MessageCost      uint64 `json:"messageExpressionCost,omitempty"`
	Error            string `json:"error,omitempty"`
	MessageExprError string `json:"messageExpressionError,omitempty"`
}

type crdVersion struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
	Total uint64 `json:"total"`
}

type crdReport struct {
	File     string       `json:"file"`
	Name     string       `json:"name"`
	Versions []crdVersion `json:"versions"`
	// Errors of the CRD validation; empty means accepted.
	Create  []string `json:"create"`
	Reapply []string `json:"reapplyUnchanged"`
	Changed []string `json:"reapplyChanged"`
	// From the previous file naming this CRD to this one, when there is one.
	UpgradeFrom string   `json:"upgradeFrom,omitempty"`
	Upgrade     []string `json:"upgrade,omitempty"`
}

type report struct {
	Kubernetes    string      `json:"kubernetes"`
	Compatibility string      `json:"compatibility"`
	Limits        limits      `json:"limits"`
	CRDs          []crdReport `json:"crds"`
}

type limits struct {
	PerCall uint64 `json:"perCallLimit"`
	Rule    uint64 `json:"staticEstimatedCostLimit"`
	CRD     uint64 `json:"staticEstimatedCRDCostLimit"`
	Runtime uint64 `json:"runtimeCELCostBudget"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crdcel FILE... | crdcel --version")
		os.Exit(2)
	}
	if os.Args[1] == "--version" {
		fmt.Printf("crdcel Kubernetes %s (compatibility version %s)\n", version.Get().GitVersion, environment.DefaultCompatibilityVersion())
		return
	}
	scheme := runtime.NewScheme()
	apiextensionsinstall.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	out := report{
		Kubernetes:    version.Get().GitVersion,
		Compatibility: environment.DefaultCompatibilityVersion().String(),
		Limits: limits{
			PerCall: celconfig.PerCallLimit,
			Rule:    validation.StaticEstimatedCostLimit,
			CRD:     validation.StaticEstimatedCRDCostLimit,
			Runtime: celconfig.RuntimeCELCostBudget,
		},
	}
	seen := map[string]*apiextensions.CustomResourceDefinition{}
	seenFile := map[string]string{}
	ctx := context.Background()
	for _, file := range os.Args[1:] {
		crd, err := load(codecs, scheme, file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crdcel: %s: %v\n", file, err)
			os.Exit(2)
		}
		r := crdReport{File: file, Name: crd.Name, Versions: []crdVersion{}}
		for _, v := range crd.Spec.Versions {
			// The internal version keeps a schema shared by every version in spec.validation.
			schema := crd.Spec.Validation
			if v.Schema != nil {
				schema = v.Schema
			}
			if schema == nil || schema.OpenAPIV3Schema == nil {
				continue
			}
			cv := crdVersion{Name: v.Name, Rules: []rule{}}
			root := validation.RootCELContext(schema.OpenAPIV3Schema)
			walk(schema.OpenAPIV3Schema, "", root, &cv)
			cv.Total = root.TotalCost.Total
			r.Versions = append(r.Versions, cv)
		}
		r.Create = messages(validation.ValidateCustomResourceDefinition(ctx, crd))
		stored := established(crd)
		r.Reapply = messages(validation.ValidateCustomResourceDefinitionUpdate(ctx, stored.DeepCopy(), stored))
		r.Changed = messages(validation.ValidateCustomResourceDefinitionUpdate(ctx, changed(stored), stored))
		if old, ok := seen[crd.Name]; ok {
			r.UpgradeFrom = seenFile[crd.Name]
			next := established(crd)
			next.Status.StoredVersions = old.Status.StoredVersions
			r.Upgrade = messages(validation.ValidateCustomResourceDefinitionUpdate(ctx, next, old))
			if r.Upgrade == nil {
				r.Upgrade = []string{}
			}
		}
		seen[crd.Name] = stored
		seenFile[crd.Name] = file
		out.CRDs = append(out.CRDs, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// load reads one apiextensions.k8s.io/v1 CRD, defaults it as the API server does and converts it
// to the internal version the validation works on; the stored versions are what a create records.
func load(codecs serializer.CodecFactory, scheme *runtime.Scheme, file string) (*apiextensions.CustomResourceDefinition, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	obj, _, err := codecs.UniversalDeserializer().Decode(data, nil, &apiextensionsv1.CustomResourceDefinition{})
	if err != nil {
		return nil, err
	}
	v1, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("not a CustomResourceDefinition (apiextensions.k8s.io/v1): %T", obj)
	}
	scheme.Default(v1)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := scheme.Convert(v1, crd, nil); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = []string{v.Name}
		}
	}
	return crd, nil
}

// established is the CRD as the API server keeps it once created: Established and NamesAccepted.
func established(crd *apiextensions.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	c := crd.DeepCopy()
	c.Status.Conditions = []apiextensions.CustomResourceDefinitionCondition{
		{Type: apiextensions.Established, Status: apiextensions.ConditionTrue},
		{Type: apiextensions.NamesAccepted, Status: apiextensions.ConditionTrue},
	}
	c.Status.AcceptedNames = c.Spec.Names
	c.ResourceVersion = "1"
	return c
}

// changed is the CRD with every version's schema edited where no rule reads it (the root
// description), so the schema is no longer unchanged but every rule is.
func changed(crd *apiextensions.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	c := crd.DeepCopy()
	// The internal version keeps a schema shared by every version in spec.validation.
	if c.Spec.Validation != nil && c.Spec.Validation.OpenAPIV3Schema != nil {
		c.Spec.Validation.OpenAPIV3Schema.Description += " (changed)"
	}
	for i := range c.Spec.Versions {
		if s := c.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			s.OpenAPIV3Schema.Description += " (changed)"
		}
	}
	return c
}

func messages(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// walk mirrors ValidateCustomResourceDefinitionOpenAPISchema's descent (properties, additional
// properties, items) with the same CEL contexts, and compiles each node's rules as it does.
func walk(s *apiextensions.JSONSchemaProps, path string, ctx *validation.CELSchemaContext, out *crdVersion) {
	if s == nil {
		return
	}
	if len(s.XValidations) > 0 {
		compile(s, path, ctx, out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walk(s.AdditionalProperties.Schema, path+"[*]", ctx.ChildAdditionalPropertiesContext(s.AdditionalProperties.Schema), out)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Properties[name]
		child := name
		if path != "" {
			child = path + "." + name
		}
		walk(&p, child, ctx.ChildPropertyContext(&p, name), out)
	}
	if s.Items != nil {
		if s.Items.Schema != nil {
			walk(s.Items.Schema, path+"[*]", ctx.ChildItemsContext(s.Items.Schema), out)
		} else {
			for i := range s.Items.JSONSchemas {
				walk(&s.Items.JSONSchemas[i], path+"[*]", ctx.ChildItemsContext(&s.Items.JSONSchemas[i]), out)
			}
		}
	}
}

func compile(s *apiextensions.JSONSchemaProps, path string, ctx *validation.CELSchemaContext, out *crdVersion) {
	at := path
	if at == "" {
		at = "<root>"
	}
	info, err := ctx.TypeInfo()
	if err != nil || info == nil {
		for _, r := range s.XValidations {
			out.Rules = append(out.Rules, rule{Path: at, Rule: r.Rule, Error: fmt.Sprintf("no type information: %v", err)})
		}
		return
	}
	results, err := cel.Compile(info.Schema, info.DeclType, celconfig.PerCallLimit, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), cel.NewExpressionsEnvLoader())
	if err != nil {
		for _, r := range s.XValidations {
			out.Rules = append(out.Rules, rule{Path: at, Rule: r.Rule, Error: err.Error()})
		}
		return
	}
	for i, cr := range results {
		card := cr.MaxCardinality
		if ctx.MaxCardinality != nil {
			card = *ctx.MaxCardinality
		}
		r := rule{Path: at, Rule: s.XValidations[i].Rule, MaxCost: cr.MaxCost, Cardinality: card, Cost: mul(cr.MaxCost, card)}
		if ctx.TotalCost != nil {
			ctx.TotalCost.ObserveExpressionCost(nil, r.Cost)
		}
		if cr.Error != nil {
			r.Error = cr.Error.Detail
		}
		if cr.MessageExpressionError != nil {
			r.MessageExprError = cr.MessageExpressionError.Detail
		} else if cr.MessageExpression != nil {
			r.MessageCost = cr.MessageExpressionMaxCost
			if ctx.TotalCost != nil {
				ctx.TotalCost.ObserveExpressionCost(nil, r.MessageCost)
			}
		}
		out.Rules = append(out.Rules, r)
	}
}

// mul is the validation's multiplyWithOverflowGuard.
func mul(cost, card uint64) uint64 {
	if cost == 0 {
		return 0
	}
	if math.MaxUint64/cost < card {
		return math.MaxUint64
	}
	return cost * card
}
