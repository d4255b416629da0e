package paygate

// ruleRequired is the rule of a field an input must carry
// (docs/protocol.md "Errors"); FieldError.Rule holds it.
const ruleRequired = "required"
