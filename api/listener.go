package api

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"
)

// SandboxOnly is the extension that marks an operation served only by the
// sandbox listener.
const SandboxOnly = "x-sandbox-only"

// ForListener returns the document a listener serves: doc itself on the
// sandbox, and doc without its sandbox-only operations on production, where
// those routes do not exist; and, given the listener's public address, with
// that address as its one server. The source names the default loopback
// listeners, both of them, and a deployment's reference (Redoc shows the
// server before every operation's path, and generators take the first as
// the base) sent integrators to http://127.0.0.1:8080 from
// https://api.example.com/docs. It never fails: a document it cannot read
// is returned as it is (the tests prove the embedded one reads). Results
// are cached, so calling it for every new server costs one parse.
func ForListener(doc []byte, sandbox bool, publicURL string) []byte {
	if sandbox && publicURL == "" {
		return doc
	}
	key := listenerKey{sha256.Sum256(doc), sandbox, publicURL}
	if out, ok := listeners.Load(key); ok {
		return out.([]byte)
	}
	out, err := forListener(doc, sandbox, publicURL)
	if err != nil {
		return doc
	}
	listeners.Store(key, out)
	return out
}

type listenerKey struct {
	doc       [sha256.Size]byte
	sandbox   bool
	publicURL string
}

var listeners sync.Map // listenerKey → the document that listener serves

func forListener(doc []byte, sandbox bool, publicURL string) ([]byte, error) {
	if !sandbox {
		var err error
		if doc, err = WithoutSandbox(doc); err != nil {
			return nil, err
		}
	}
	if publicURL == "" {
		return doc, nil
	}
	return WithServer(doc, publicURL, sandbox)
}

// WithServer replaces an OpenAPI document's servers with the one address
// of the listener serving it, described as its environment.
func WithServer(doc []byte, url string, sandbox bool) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("api: reading the document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("api: the document is not a YAML mapping")
	}
	description := "production"
	if sandbox {
		description = "sandbox (simulated bank)"
	}
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	servers := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{
		str("url"), str(url), str("description"), str(description)}}}}
	top := root.Content[0]
	if old := value(top, "servers"); old != nil {
		*old = *servers
	} else {
		top.Content = append(top.Content, str("servers"), servers)
	}
	return encode(&root)
}

// WithoutSandbox removes from an OpenAPI document every operation marked
// x-sandbox-only: true, the path items left without operations, and the
// tags no remaining operation uses. Everything else, YAML anchors
// included, is kept; components only the removed operations used stay
// (harmless, and removing them could orphan an alias).
func WithoutSandbox(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("api: reading the document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("api: the document is not a YAML mapping")
	}
	top := root.Content[0]
	used := map[string]bool{}
	if paths := value(top, "paths"); paths != nil {
		filterMapping(paths, func(_ string, item *yaml.Node) bool {
			filterMapping(item, func(key string, op *yaml.Node) bool {
				if !httpMethods[key] {
					return true
				}
				if sandboxOnly(op) {
					return false
				}
				collectTags(op, used)
				return true
			})
			for i := 0; i < len(item.Content); i += 2 {
				if httpMethods[item.Content[i].Value] {
					return true
				}
			}
			return false
		})
	}
	if tags := value(top, "tags"); tags != nil && tags.Kind == yaml.SequenceNode {
		kept := tags.Content[:0]
		for _, t := range tags.Content {
			if name := value(t, "name"); name != nil && used[name.Value] {
				kept = append(kept, t)
			}
		}
		tags.Content = kept
	}
	return encode(&root)
}

func encode(root *yaml.Node) ([]byte, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("api: writing the document: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("api: writing the document: %w", err)
	}
	return out.Bytes(), nil
}

var httpMethods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}

// value returns the value of key in mapping m, or nil.
func value(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// filterMapping keeps the pairs of mapping m for which keep is true.
func filterMapping(m *yaml.Node, keep func(key string, v *yaml.Node) bool) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	kept := m.Content[:0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if keep(m.Content[i].Value, m.Content[i+1]) {
			kept = append(kept, m.Content[i], m.Content[i+1])
		}
	}
	m.Content = kept
}

func sandboxOnly(op *yaml.Node) bool {
	v := value(op, SandboxOnly)
	return v != nil && v.Value == "true"
}

// collectTags records the tags of op and of its callbacks' operations.
func collectTags(op *yaml.Node, used map[string]bool) {
	if tags := value(op, "tags"); tags != nil {
		for _, t := range tags.Content {
			used[t.Value] = true
		}
	}
	callbacks := value(op, "callbacks")
	if callbacks == nil {
		return
	}
	for i := 1; i < len(callbacks.Content); i += 2 {
		for j := 1; j < len(callbacks.Content[i].Content); j += 2 {
			item := callbacks.Content[i].Content[j]
			for k := 0; k+1 < len(item.Content); k += 2 {
				if httpMethods[item.Content[k].Value] {
					collectTags(item.Content[k+1], used)
				}
			}
		}
	}
}
