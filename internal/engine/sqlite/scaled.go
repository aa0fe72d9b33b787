package sqlite

// scaled are the columns SQLite stores as integers of 1/scale units, having no exact
// decimals (1.3.1): money in cents, the tax and discount rates in 1/10000. The loader
// converts the generator's decimal text into them; the sql-mode statements read and
// write them as they are. s_ytd is a quantity, not money.
var scaled = map[string]int64{
	"w_tax": 10000, "w_ytd": 100,
	"d_tax": 10000, "d_ytd": 100,
	"c_credit_lim": 100, "c_discount": 10000, "c_balance": 100, "c_ytd_payment": 100,
	"h_amount":  100,
	"ol_amount": 100,
	"i_price":   100,
}
