package paygate

// FPXCode is an `fpx_debit_auth_code` from the `fpx` JSON of a callback
// (docs/protocol.md A2). Codes are strings such as "00", "1C" or "XA", never integers.
type FPXCode string

// Status maps the code to a payment status per the table of docs/protocol.md A2:
// "00" is success; empty, "09", "76" and "99" are pending; every other code is
// failed.
func (c FPXCode) Status() Status {
	switch c {
	case "00":
		return StatusSuccess
	case "", "09", "76", "99":
		return StatusPending
	}
	return StatusFailed
}

// Reason returns the meaning of the code from the public FPX response-code
// table, for messages only (act on Status, not on the text), or "" for a code
// the table does not list.
func (c FPXCode) Reason() string {
	switch c {
	case "00":
		return "Approved"
	case "03":
		return "Invalid Merchant"
	case "05":
		return "Invalid Seller Or Acquiring Bank Code"
	case "09":
		return "Transaction Pending"
	case "12":
		return "Invalid Transaction"
	case "13":
		return "Invalid Amount"
	case "14":
		return "Invalid Buyer Account"
	case "20":
		return "Invalid Response"
	case "30":
		return "Format Error"
	case "31":
		return "Invalid Bank"
	case "39":
		return "No Credit Account"
	case "45":
		return "Duplicate Seller Order Number"
	case "46":
		return "Invalid Seller Exchange Or Seller"
	case "47":
		return "Invalid Currency"
	case "48":
		return "Maximum Transaction Limit Exceeded"
	case "49":
		return "Merchant Specific Limit Exceeded"
	case "50":
		return "Invalid Seller for Merchant Specific Limit"
	case "51":
		return "Insufficient Funds"
	case "53":
		return "No Buyer Account Number"
	case "57":
		return "Transaction Not Permitted"
	case "58":
		return "Transaction To Merchant Not Permitted"
	case "70":
		return "Invalid Serial Number"
	case "76":
		return "Transaction Not Found"
	case "77":
		return "Invalid Buyer Name Or Buyer ID"
	case "78":
		return "Decryption Failed"
	case "79":
		return "Host Decline When Down"
	case "80":
		return "Buyer Cancel Transaction"
	case "83":
		return "Invalid Transaction Model"
	case "84":
		return "Invalid Transaction Type"
	case "85":
		return "Internal Error At Bank System"
	case "87":
		return "Debit Failed Exception Handling"
	case "88":
		return "Credit Failed Exception Handling"
	case "89":
		return "Transaction Not Received Exception Handling"
	case "90":
		return "Bank Internet Banking Unavailable"
	case "92":
		return "Invalid Buyer Bank"
	case "96":
		return "System Malfunction"
	case "98":
		return "MAC Error"
	case "99":
		return "Pending Authorization (Applicable for B2B model)"
	case "BB":
		return "Blocked Bank"
	case "BC":
		return "Transaction Cancelled By Customer"
	case "DA":
		return "Invalid Application Type"
	case "DB":
		return "Invalid Email Format"
	case "DC":
		return "Invalid Maximum Frequency"
	case "DD":
		return "Invalid Frequency Mode"
	case "DE":
		return "Invalid Expiry Date"
	case "DF":
		return "Invalid e-Mandate Buyer Bank ID"
	case "FE":
		return "Internal Error"
	case "OE":
		return "Transaction Rejected As Not In FPX Operating Hours"
	case "OF":
		return "Transaction Timeout"
	case "SB":
		return "Invalid Acquiring Bank Code"
	case "XA":
		return "Invalid Source IP Address (Applicable for B2B2 model)"
	case "XB":
		return "Invalid Seller Exchange IP"
	case "XC":
		return "Seller Exchange Encryption Error"
	case "XE":
		return "Invalid Message"
	case "XF":
		return "Invalid Number Of Orders"
	case "XI":
		return "Invalid Seller Exchange"
	case "XM":
		return "Invalid FPX Transaction Model"
	case "XN":
		return "Transaction Rejected Due To Duplicate Seller Exchange Order Number"
	case "XO":
		return "Duplicate Exchange Order Number"
	case "XS":
		return "Seller Does Not Belong To Exchange"
	case "XT":
		return "Invalid Transaction Type"
	case "XW":
		return "Seller Exchange Date Difference Exceeded"
	case "1A":
		return "Buyer Session Timeout At Internet Banking Login Page"
	case "1B":
		return "Buyer Failed To Provide The Necessary Info To Login To Internet Banking Login Page"
	case "1C":
		return "Buyer Choose Cancel At Login Page"
	case "1D":
		return "Buyer Session Timeout At Account Selection Page"
	case "1E":
		return "Buyer Failed To Provide The Necessary Info At Account Selection Page"
	case "1F":
		return "Buyer Choose Cancel At Account Selection Page"
	case "1G":
		return "Buyer Session Timeout At TAC Request Page"
	case "1H":
		return "Buyer Failed To Provide The Necessary Info At TAC Request Page"
	case "1I":
		return "Buyer Choose Cancel At TAC Request Page"
	case "1J":
		return "Buyer Session Timeout At Confirmation Page"
	case "1K":
		return "Buyer Failed To Provide The Necessary Info At Confirmation Page"
	case "1L":
		return "Buyer Choose Cancel At Confirmation Page"
	case "1M":
		return "Internet Banking Session Timeout"
	case "2A":
		return "Transaction Amount Is Lower Than Minimum Limit"
	case "2X":
		return "Transaction Is Canceled By Merchant"
	}
	return ""
}

// Describe returns the code followed by its reason, "51 (Insufficient
// Funds)", or the bare code when the table does not list it. (FPXCode has no
// String method on purpose: formatted with %s or %q it is the code itself,
// as the wire carries it.)
func (c FPXCode) Describe() string {
	if r := c.Reason(); r != "" {
		return string(c) + " (" + r + ")"
	}
	return string(c)
}
