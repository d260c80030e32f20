//! The field rules of spec 2.4 (account update) and 2.5 (cards).

use chrono::Datelike;
use nubis_model::{Problems, Timestamp};
use nubis_store::billing::ContactChanges;

use super::gateway::CardDetails;
use super::requests::{AccountUpdate, CardInput};

/// ISO 3166-1 alpha-2 country codes.
const COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ \
BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET \
FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR \
IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN \
MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY \
QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR \
TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// US states, the District of Columbia and territories.
const US_STATES: &str = "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ \
NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI UM";
/// US military "states".
const US_MILITARY: &str = "AA AE AP";
const CA_PROVINCES: &str = "AB BC MB NB NL NS NT NU ON PE QC SK YT";

const FORBIDDEN: &[char] = &['<', '>', '(', ')', '"', '='];

fn among(list: &str, code: &str) -> bool {
    code.len() == 2 && list.split_whitespace().any(|c| c == code)
}

fn max_len(p: &mut Problems, field: &str, v: &Option<String>, max: usize) {
    if let Some(s) = v
        && s.chars().count() > max
    {
        p.add(field, format!("Must be at most {max} characters"));
    }
}

fn no_forbidden(p: &mut Problems, field: &str, v: &Option<String>) {
    if let Some(s) = v
        && s.contains(FORBIDDEN)
    {
        p.add(field, "Must not contain any of < > ( ) \" =");
    }
}

/// A US ZIP code: five digits, optionally a hyphen and four more.
fn is_us_zip(z: &str) -> bool {
    let b = z.as_bytes();
    let five = |s: &[u8]| s.len() == 5 && s.iter().all(u8::is_ascii_digit);
    match b.len() {
        5 => five(b),
        10 => five(&b[..5]) && b[5] == b'-' && b[6..].iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Checks an account update against the stored values (`country`, `state`, `zip` are checked
/// together, as they will be after the update) and returns the changes to write.
pub(crate) fn account_update(
    input: &AccountUpdate,
    stored_country: &str,
    stored_state: &str,
    stored_zip: &str,
) -> Result<ContactChanges, nubis_model::Error> {
    let mut p = Problems::new();
    max_len(&mut p, "address_1", &input.address_1, 64);
    max_len(&mut p, "address_2", &input.address_2, 64);
    max_len(&mut p, "city", &input.city, 24);
    max_len(&mut p, "company", &input.company, 128);
    max_len(&mut p, "email", &input.email, 128);
    max_len(&mut p, "first_name", &input.first_name, 50);
    max_len(&mut p, "last_name", &input.last_name, 50);
    max_len(&mut p, "phone", &input.phone, 32);
    max_len(&mut p, "state", &input.state, 24);
    max_len(&mut p, "tax_id", &input.tax_id, 25);
    no_forbidden(&mut p, "company", &input.company);
    no_forbidden(&mut p, "first_name", &input.first_name);
    no_forbidden(&mut p, "last_name", &input.last_name);
    if let Some(e) = &input.email
        && !nubis_model::validate::is_email(e)
    {
        p.add("email", "Must be a valid e-mail address");
    }
    let country = input.country.as_ref().map(|c| c.to_ascii_uppercase());
    if let Some(c) = &country
        && !c.is_empty()
        && !among(COUNTRIES, c)
    {
        p.add("country", "Must be a two-letter ISO 3166 country code");
    }
    let eff_country = country.clone().unwrap_or_else(|| stored_country.to_string());
    let place_changes = input.country.is_some() || input.state.is_some() || input.zip.is_some();
    let state = input.state.as_ref().map(|s| match eff_country.as_str() {
        "US" | "CA" => s.to_ascii_uppercase(),
        _ => s.clone(),
    });
    if place_changes {
        let eff_state = state.clone().unwrap_or_else(|| stored_state.to_string());
        match eff_country.as_str() {
            "US" if !eff_state.is_empty() && !among(US_STATES, &eff_state) && !among(US_MILITARY, &eff_state) => {
                p.add("state", "Must be a two-letter US state code (AA, AE or AP for military addresses)")
            }
            "CA" if !eff_state.is_empty() && !among(CA_PROVINCES, &eff_state) => {
                p.add("state", "Must be a two-letter Canadian province or territory code")
            }
            _ => {}
        }
    }
    let mut zip_bad = false;
    if let Some(z) = &input.zip {
        zip_bad = true;
        let alnum = z.chars().filter(char::is_ascii_alphanumeric).count();
        if !z.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            p.add("zip", "Must contain only ASCII letters, digits and hyphens");
        } else if alnum > 9 {
            p.add("zip", "Must contain at most 9 letters or digits");
        } else {
            zip_bad = false;
        }
    }
    if place_changes && eff_country == "US" {
        let eff_zip = input.zip.clone().unwrap_or_else(|| stored_zip.to_string());
        if !is_us_zip(&eff_zip) && !zip_bad {
            p.add("zip", "Must be a valid US ZIP code (12345 or 12345-6789) when the country is US");
        }
    }
    p.finish()?;
    Ok(ContactChanges {
        company: input.company.clone(),
        email: input.email.clone(),
        first_name: input.first_name.clone(),
        last_name: input.last_name.clone(),
        address_1: input.address_1.clone(),
        address_2: input.address_2.clone(),
        city: input.city.clone(),
        state,
        zip: input.zip.clone(),
        country,
        phone: input.phone.clone(),
        tax_id: input.tax_id.clone(),
    })
}

/// A checked card: the rules of spec 2.5, each failure on its field under `prefix`
/// (`data.` for a payment method, nothing for the deprecated credit-card operation).
pub(crate) fn card(input: &CardInput, prefix: &str, now: Timestamp) -> Result<CardDetails, nubis_model::Error> {
    let mut p = Problems::new();
    let f = |name: &str| format!("{prefix}{name}");
    match &input.card_number {
        None => p.add(f("card_number"), "Card number is required"),
        Some(n) if !n.bytes().all(|b| b.is_ascii_digit()) => {
            p.add(f("card_number"), "Must contain only digits (no spaces or hyphens)")
        }
        Some(n) if !(14..=24).contains(&n.len()) => p.add(f("card_number"), "Must be 14 to 24 digits"),
        Some(_) => {}
    }
    match &input.cvv {
        None => p.add(f("cvv"), "CVV is required"),
        Some(c) if !(3..=4).contains(&c.len()) || !c.bytes().all(|b| b.is_ascii_digit()) => {
            p.add(f("cvv"), "Must be 3 or 4 digits")
        }
        Some(_) => {}
    }
    match input.expiry_month {
        None => p.add(f("expiry_month"), "Expiry month is required"),
        Some(m) if !(1..=12).contains(&m) => p.add(f("expiry_month"), "Must be between 1 and 12"),
        Some(_) => {}
    }
    match input.expiry_year {
        None => p.add(f("expiry_year"), "Expiry year is required"),
        Some(y) if !(1000..=9999).contains(&y) => p.add(f("expiry_year"), "Must be a four-digit year"),
        Some(_) => {}
    }
    if let (Some(m), Some(y)) = (input.expiry_month, input.expiry_year)
        && (1..=12).contains(&m)
        && (1000..=9999).contains(&y)
    {
        let (cy, cm) = (i64::from(now.0.year()), i64::from(now.0.month()));
        if (y, m) < (cy, cm) {
            p.add(f("expiry_year"), "The card has expired: expiry must be this month or later");
        }
    }
    p.finish()?;
    Ok(CardDetails {
        number: input.card_number.clone().unwrap_or_default(),
        cvv: input.cvv.clone().unwrap_or_default(),
        expiry_month: input.expiry_month.unwrap_or_default(),
        expiry_year: input.expiry_year.unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn us_zips() {
        assert!(is_us_zip("19102"));
        assert!(is_us_zip("19102-1234"));
        assert!(!is_us_zip("1910"));
        assert!(!is_us_zip("ABCDE"));
        assert!(!is_us_zip("19102-12"));
    }

    #[test]
    fn codes() {
        assert!(among(COUNTRIES, "US") && among(COUNTRIES, "DE") && !among(COUNTRIES, "XX"));
        assert!(among(US_STATES, "PA") && !among(US_STATES, "ZZ"));
        assert_eq!(COUNTRIES.split_whitespace().count(), 249);
    }
}
