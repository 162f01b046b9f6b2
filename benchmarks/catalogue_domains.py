"""The domains of the benchmark catalogue: the records each holds and the actions on them.

Data, not code: ``tool_catalogue`` turns each (domain, record, action) into one tool, named
``<prefix>_<action>_<record>`` (``billing_get_invoice_pdf``), and adds each domain's own tools.
An action family (``_DOC``: get, list, create, update, delete, pdf, send, void) is what gives a
record its near neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Record:
    """One kind of record a domain holds: ``noun`` as the API names it, what it holds, its actions."""

    noun: str
    about: str
    actions: tuple[str, ...]
    plural: str = ""

    @property
    def many(self) -> str:
        return self.plural or f"{self.noun}s"


@dataclass(frozen=True)
class Domain:
    prefix: str
    service: str
    records: tuple[Record, ...]
    extras: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """Tools only this domain has: (name after the prefix, description, required argument names)."""


_RECORD = ("get", "list", "create", "update", "delete")
_DOC = ("get", "list", "create", "update", "delete", "pdf", "send", "void")
_FLOW = ("get", "list", "create", "approve", "reject", "cancel", "assign", "comment")
_LOOKUP = ("get", "list", "search")
_FILE = ("get", "list", "upload", "download", "delete", "share", "rename", "move")
_ARCHIVE = ("archive", "restore", "history")
_EXPORT = ("export", "count")


def _r(noun: str, about: str, *families: tuple[str, ...], plural: str = "") -> Record:
    actions: list[str] = []
    for family in families:
        actions += [a for a in family if a not in actions]
    return Record(noun, about, tuple(actions), plural)


DOMAINS: tuple[Domain, ...] = (
    Domain(
        "billing",
        "the billing system",
        (
            _r(
                "invoice",
                "a bill sent to a customer: amount, due date, line items and payment status",
                _DOC,
                _EXPORT,
            ),
            _r("credit_note", "a correction that reduces what a customer owes on an invoice", _DOC),
            _r("payment", "money received from a customer against invoices", _RECORD, ("refund",), _EXPORT),
            _r(
                "subscription", "a recurring plan a customer pays for", _RECORD, ("cancel", "pause", "resume")
            ),
        ),
        (
            (
                "get_account_balance",
                "Show the outstanding balance a customer owes across all open invoices.",
                ("customer_id",),
            ),
            (
                "apply_discount_code",
                "Apply a discount code to a customer's next invoice.",
                ("customer_id", "code"),
            ),
        ),
    ),
    Domain(
        "crm",
        "the CRM",
        (
            _r(
                "contact",
                "a person at a customer or prospect: name, email, phone, company",
                _RECORD,
                ("search", "merge"),
                _EXPORT,
            ),
            _r(
                "company",
                "an organisation the sales team works with",
                _RECORD,
                ("search",),
                plural="companies",
            ),
            _r(
                "deal",
                "a sales opportunity with a value, stage and expected close date",
                _RECORD,
                ("assign",),
                _ARCHIVE,
                _EXPORT,
            ),
            _r("lead", "an unqualified prospect from a form or campaign", _RECORD, ("convert", "assign")),
            _r("note", "a free-text note attached to a contact or deal", ("get", "list", "create", "delete")),
        ),
        (
            (
                "log_call",
                "Record a phone call with a contact: when, how long and what was said.",
                ("contact_id", "summary"),
            ),
            ("get_pipeline_summary", "Summarise open deals by stage with their total value.", ()),
        ),
    ),
    Domain(
        "support",
        "the help desk",
        (
            _r(
                "ticket",
                "a customer's support request: subject, priority, status and assignee",
                _FLOW,
                ("close", "reopen", "merge", "escalate"),
                _EXPORT,
            ),
            _r("macro", "a saved canned reply agents insert into tickets", _RECORD),
            _r("article", "a help-centre article customers can read", _RECORD, ("search", "publish")),
        ),
        (
            (
                "get_satisfaction_scores",
                "Customer satisfaction ratings left after tickets were solved, by week.",
                (),
            ),
        ),
    ),
    Domain(
        "hr",
        "the HR system",
        (
            _r(
                "employee",
                "a person employed by the company: role, manager, start date, salary band",
                _RECORD,
                ("search",),
                _ARCHIVE,
                _EXPORT,
            ),
            _r("time_off_request", "a request for vacation, sick leave or parental leave", _FLOW),
            _r("job_posting", "an open position advertised to candidates", _RECORD, ("publish", "close")),
            _r(
                "candidate",
                "a job applicant and where they are in the hiring process",
                _RECORD,
                ("search", "advance", "reject"),
            ),
            _r("review", "a performance review of an employee", ("get", "list", "create", "submit")),
        ),
        (
            ("get_org_chart", "The reporting lines under a manager, as a tree.", ("manager_id",)),
            (
                "get_leave_balance",
                "Days of vacation and sick leave an employee has left this year.",
                ("employee_id",),
            ),
        ),
    ),
    Domain(
        "payroll",
        "the payroll service",
        (
            _r(
                "payslip",
                "an employee's pay statement for one pay period: gross, deductions, net",
                ("get", "list", "pdf", "send"),
            ),
            _r(
                "pay_run",
                "one payroll batch for all employees in a period",
                ("get", "list", "create", "approve", "cancel"),
            ),
            _r("expense_claim", "an employee's request to be paid back for money spent on work", _FLOW),
        ),
        (
            (
                "get_tax_withholding",
                "The income tax withheld from an employee's pay so far this year.",
                ("employee_id",),
            ),
        ),
    ),
    Domain(
        "inventory",
        "the warehouse system",
        (
            _r(
                "product",
                "an item the company stocks: SKU, name, price, weight",
                _RECORD,
                ("search",),
                _EXPORT,
            ),
            _r(
                "stock_level",
                "how many units of a product are on hand at a warehouse",
                ("get", "list", "update"),
            ),
            _r("warehouse", "a storage location with an address and capacity", _RECORD),
            _r(
                "stock_transfer",
                "a movement of units between two warehouses",
                ("get", "list", "create", "cancel"),
            ),
        ),
        (
            ("get_low_stock_alerts", "Products whose units on hand fell below their reorder point.", ()),
            (
                "reserve_stock",
                "Hold units of a product for an order so they cannot be sold twice.",
                ("product_id", "quantity"),
            ),
        ),
    ),
    Domain(
        "orders",
        "the order management system",
        (
            _r(
                "order",
                "a customer's purchase: items, totals, shipping address and status",
                _RECORD,
                ("search", "cancel"),
                _EXPORT,
            ),
            _r("return", "a customer sending items back for a refund or exchange", _FLOW),
            _r("cart", "items a shopper has not checked out yet", ("get", "update", "delete")),
        ),
        (
            (
                "get_order_tracking",
                "Where a shipped order is now, from the carrier's tracking events.",
                ("order_id",),
            ),
            (
                "resend_order_confirmation",
                "Email the order confirmation to the customer again.",
                ("order_id",),
            ),
        ),
    ),
    Domain(
        "shipping",
        "the shipping platform",
        (
            _r(
                "shipment",
                "a parcel handed to a carrier with a tracking number",
                _RECORD,
                ("cancel", "track"),
            ),
            _r("label", "a printable carrier label for a parcel", ("get", "create", "void", "pdf")),
            _r("pickup", "a carrier collection booked at an address", ("get", "list", "create", "cancel")),
        ),
        (
            (
                "get_shipping_rates",
                "Compare carrier prices and delivery times for a parcel's size, weight and route.",
                ("origin", "destination", "weight_kg"),
            ),
            ("validate_address", "Check that a postal address exists and correct its format.", ("address",)),
        ),
    ),
    Domain(
        "procurement",
        "the purchasing system",
        (
            _r("purchase_order", "an order the company places with a supplier", _DOC, ("approve",)),
            _r("supplier", "a vendor the company buys from: contacts, terms, rating", _RECORD, ("search",)),
            _r(
                "requisition",
                "an internal request to buy something, before it becomes a purchase order",
                _FLOW,
            ),
        ),
        (),
    ),
    Domain(
        "accounting",
        "the general ledger",
        (
            _r(
                "journal_entry",
                "a double-entry posting to ledger accounts",
                ("get", "list", "create", "reverse"),
            ),
            _r("ledger_account", "an account in the chart of accounts", _LOOKUP, ("create",)),
            _r("budget", "planned spending for a department and period", _RECORD),
            _r("vendor_bill", "a bill the company received from a supplier and must pay", _DOC, ("pay",)),
        ),
        (
            (
                "get_profit_and_loss",
                "Income, costs and profit for a period, by account.",
                ("start_date", "end_date"),
            ),
            ("get_balance_sheet", "Assets, liabilities and equity on a date.", ("date",)),
            ("close_period", "Lock a month so no more entries can be posted to it.", ("period",)),
        ),
    ),
    Domain(
        "calendar",
        "the calendar",
        (
            _r(
                "event",
                "a meeting or appointment with a time, place and attendees",
                _RECORD,
                ("search", "respond"),
            ),
            _r("calendar", "a shared or personal calendar", ("get", "list", "create", "share")),
            _r("room", "a bookable meeting room", ("get", "list", "book")),
        ),
        (
            (
                "find_free_slots",
                "Times when all the given people are available for a meeting of a given length.",
                ("attendees", "duration_minutes"),
            ),
        ),
    ),
    Domain(
        "mail",
        "the mailbox",
        (
            _r(
                "message",
                "an email: sender, recipients, subject, body and attachments",
                ("get", "list", "search", "send", "delete", "move", "reply", "forward"),
            ),
            _r(
                "draft",
                "an email being written and not sent yet",
                ("get", "list", "create", "update", "delete", "send"),
            ),
            _r("label", "a tag used to group emails", ("list", "create", "delete")),
            _r("filter", "a rule that sorts incoming email automatically", ("list", "create", "delete")),
        ),
        (
            ("get_attachment", "Download one file attached to an email.", ("message_id", "attachment_id")),
            (
                "set_auto_reply",
                "Turn the out-of-office automatic reply on or off with its text.",
                ("enabled",),
            ),
        ),
    ),
    Domain(
        "chat",
        "the team chat",
        (
            _r("channel", "a chat room for a team or topic", ("get", "list", "create", "archive", "invite")),
            _r(
                "message",
                "a chat post in a channel or direct conversation",
                ("list", "send", "update", "delete", "search", "pin"),
            ),
            _r("reminder", "a nudge the chat bot posts at a set time", ("list", "create", "delete")),
        ),
        (
            ("set_status", "Set your chat presence status text and emoji.", ("text",)),
            ("get_user_presence", "Whether a teammate is online, away or in do-not-disturb.", ("user_id",)),
        ),
    ),
    Domain(
        "docs",
        "the document editor",
        (
            _r(
                "document",
                "a text document with its content and sharing settings",
                _FILE,
                ("create", "search", "export", "history"),
            ),
            _r(
                "comment", "a remark left on a passage of a document", ("list", "create", "delete", "resolve")
            ),
            _r("template", "a starting layout new documents are copied from", ("get", "list", "create")),
        ),
        (),
    ),
    Domain(
        "storage",
        "the file storage",
        (
            _r("file", "a stored file: name, size, owner, folder", _FILE, ("search", "restore", "history")),
            _r("folder", "a folder that holds files", ("get", "list", "create", "delete", "share", "move")),
        ),
        (
            ("get_storage_quota", "How much storage space is used and how much is left.", ()),
            ("create_share_link", "Make a public link anyone can use to open a file.", ("file_id",)),
        ),
    ),
    Domain(
        "tasks",
        "the project tracker",
        (
            _r(
                "task",
                "a piece of work with an owner, due date and status",
                _RECORD,
                ("assign", "complete", "search", "comment"),
                _EXPORT,
            ),
            _r("project", "a group of tasks with a goal and deadline", _RECORD, _ARCHIVE),
            _r("milestone", "a checkpoint date in a project", ("get", "list", "create", "update")),
            _r(
                "sprint",
                "a fixed period of planned work for a team",
                ("get", "list", "create", "start", "close"),
            ),
        ),
        (
            ("get_burndown", "Remaining work per day in a sprint.", ("sprint_id",)),
            ("log_time", "Record hours worked on a task.", ("task_id", "hours")),
        ),
    ),
    Domain(
        "code",
        "the code hosting service",
        (
            _r(
                "repository",
                "a git repository with its settings",
                ("get", "list", "create", "delete", "archive", "search"),
                plural="repositories",
            ),
            _r(
                "pull_request",
                "proposed code changes awaiting review",
                ("get", "list", "create", "update", "merge", "close", "review", "comment"),
            ),
            _r(
                "issue",
                "a bug report or feature request in a repository",
                _RECORD,
                ("close", "assign", "comment", "search"),
            ),
            _r("branch", "a line of development in a repository", ("list", "create", "delete", "protect")),
            _r("release", "a tagged version of a repository with notes", ("get", "list", "create", "delete")),
        ),
        (
            (
                "get_file_contents",
                "Read one file from a repository at a given branch or commit.",
                ("repository", "path"),
            ),
            ("list_commits", "Commits on a branch, newest first, with author and message.", ("repository",)),
        ),
    ),
    Domain(
        "ci",
        "the build service",
        (
            _r(
                "pipeline",
                "a build-and-test run triggered by a commit",
                ("get", "list", "start", "cancel", "retry"),
            ),
            _r("job", "one stage of a pipeline, with its log", ("get", "list", "retry")),
            _r("artifact", "a file produced by a build", ("list", "download", "delete")),
            _r("secret", "an encrypted variable builds can read", ("list", "create", "delete")),
        ),
        (("get_job_log", "The console output of one build job.", ("job_id",)),),
    ),
    Domain(
        "cloud",
        "the cloud console",
        (
            _r(
                "instance",
                "a virtual machine: size, region, state, IP address",
                ("get", "list", "create", "delete", "start", "stop", "reboot", "resize"),
            ),
            _r(
                "volume",
                "a block storage disk",
                ("get", "list", "create", "delete", "attach", "detach", "snapshot"),
            ),
            _r("bucket", "an object storage container", ("get", "list", "create", "delete")),
            _r("dns_record", "a DNS entry for a domain name", ("get", "list", "create", "update", "delete")),
        ),
        (
            ("get_cost_report", "Cloud spending by service and day.", ("start_date", "end_date")),
            (
                "get_instance_metrics",
                "CPU, memory and network use of a virtual machine over time.",
                ("instance_id",),
            ),
        ),
    ),
    Domain(
        "monitoring",
        "the monitoring platform",
        (
            _r(
                "alert",
                "a notification that a metric crossed a threshold",
                ("get", "list", "acknowledge", "resolve", "silence"),
            ),
            _r("dashboard", "a page of charts", ("get", "list", "create", "update", "delete", "share")),
            _r(
                "incident",
                "an outage or degradation being handled by on-call",
                _RECORD,
                ("resolve", "escalate", "comment"),
            ),
            _r(
                "monitor", "a check that raises alerts", ("get", "list", "create", "update", "delete", "mute")
            ),
        ),
        (
            ("query_metrics", "Run a metrics query and return the time series.", ("query",)),
            ("search_logs", "Find log lines matching a query in a time window.", ("query",)),
            ("get_on_call", "Who is on call now for a team rotation.", ("team",)),
        ),
    ),
    Domain(
        "analytics",
        "the product analytics tool",
        (
            _r(
                "report",
                "a saved chart or table over events",
                ("get", "list", "create", "delete", "export", "schedule"),
            ),
            _r(
                "segment",
                "a saved group of users defined by their behaviour",
                ("get", "list", "create", "delete"),
            ),
            _r("funnel", "conversion through a sequence of steps", ("get", "list", "create")),
        ),
        (
            ("get_active_users", "Daily, weekly or monthly active users over a period.", ("period",)),
            ("get_retention", "How many users come back in the weeks after they sign up.", ()),
            ("track_event", "Send one product event for a user.", ("user_id", "event")),
        ),
    ),
    Domain(
        "marketing",
        "the marketing platform",
        (
            _r(
                "campaign",
                "an email or ad campaign with an audience and schedule",
                _RECORD,
                ("send", "schedule", "pause", "duplicate"),
            ),
            _r("mailing_list", "a list of subscribers", ("get", "list", "create", "delete")),
            _r(
                "subscriber", "a person on a mailing list", ("get", "list", "create", "delete", "unsubscribe")
            ),
            _r("landing_page", "a web page built for a campaign", ("get", "list", "create", "publish")),
        ),
        (
            (
                "get_campaign_stats",
                "Opens, clicks, bounces and unsubscribes for a sent campaign.",
                ("campaign_id",),
            ),
        ),
    ),
    Domain(
        "social",
        "the social media scheduler",
        (
            _r(
                "post",
                "a social media post with text and images",
                ("get", "list", "create", "delete", "schedule", "publish"),
            ),
            _r("mention", "a public post that mentions the brand", ("list", "reply")),
        ),
        (("get_follower_growth", "Followers gained and lost per day on each network.", ()),),
    ),
    Domain(
        "cms",
        "the website content system",
        (
            _r("page", "a web page with its content and URL", _RECORD, ("publish", "unpublish", "history")),
            _r("blog_post", "an article on the company blog", _RECORD, ("publish", "schedule")),
            _r("media", "an uploaded image or video", ("get", "list", "upload", "delete"), plural="media"),
        ),
        (),
    ),
    Domain(
        "ecommerce",
        "the online store",
        (
            _r(
                "listing",
                "a product as shown in the storefront: title, photos, price",
                _RECORD,
                ("publish", "unpublish"),
            ),
            _r("coupon", "a discount code shoppers can use", _RECORD),
            _r(
                "customer_review",
                "a shopper's star rating and review of a product",
                ("list", "reply", "hide"),
            ),
        ),
        (
            (
                "get_sales_summary",
                "Revenue, orders and average order value per day.",
                ("start_date", "end_date"),
            ),
        ),
    ),
    Domain(
        "payments",
        "the payment processor",
        (
            _r(
                "charge",
                "a card payment taken from a customer",
                ("get", "list", "create", "capture", "refund"),
            ),
            _r(
                "dispute",
                "a chargeback a cardholder opened with their bank",
                ("get", "list", "respond", "accept"),
            ),
            _r(
                "payout",
                "money transferred from the processor to the company's bank account",
                ("get", "list"),
            ),
            _r(
                "payment_link",
                "a hosted page where someone can pay a set amount",
                ("get", "list", "create", "deactivate"),
            ),
        ),
        (),
    ),
    Domain(
        "banking",
        "the business bank account",
        (
            _r(
                "transaction",
                "a debit or credit on a bank account",
                ("get", "list", "search", "categorize", "export"),
            ),
            _r("transfer", "money sent to another account", ("get", "list", "create", "cancel")),
            _r("card", "a company debit or credit card", ("get", "list", "freeze", "unfreeze", "create")),
        ),
        (
            ("get_account_balance", "The current balance of each business bank account.", ()),
            ("get_statement", "The monthly bank statement as a PDF.", ("month",)),
        ),
    ),
    Domain(
        "travel",
        "the travel booking tool",
        (
            _r("flight", "a flight with times, airline and fare", ("search", "book", "cancel", "get")),
            _r("hotel", "a hotel with rooms, rates and location", ("search", "book", "cancel", "get")),
            _r(
                "trip",
                "an itinerary of bookings for one journey",
                ("get", "list", "create", "delete", "share"),
            ),
            _r("car_rental", "a rental car booking", ("search", "book", "cancel")),
        ),
        (
            ("get_travel_policy", "The company's rules for travel spending by trip type.", ()),
            ("check_in_flight", "Check in for a booked flight and get the boarding pass.", ("booking_id",)),
        ),
    ),
    Domain(
        "weather",
        "the weather service",
        (),
        (
            ("get_current_weather", "Current temperature, wind and conditions at a place.", ("location",)),
            (
                "get_forecast",
                "Daily forecast for the next days at a place: highs, lows and chance of rain.",
                ("location", "days"),
            ),
            ("get_hourly_forecast", "Hour-by-hour forecast for the next 48 hours at a place.", ("location",)),
            ("get_air_quality", "Air quality index and pollutant levels at a place.", ("location",)),
            ("get_weather_alerts", "Active storm, flood and heat warnings for a region.", ("region",)),
            ("get_historical_weather", "Observed weather on a past date at a place.", ("location", "date")),
            ("get_uv_index", "Ultraviolet index and sunburn risk at a place today.", ("location",)),
            ("get_sunrise_sunset", "Sunrise and sunset times at a place on a date.", ("location", "date")),
        ),
    ),
    Domain(
        "maps",
        "the maps service",
        (
            _r("place", "a point of interest: name, address, opening hours", ("get", "search")),
            _r("saved_place", "a place a user bookmarked", ("list", "create", "delete")),
        ),
        (
            (
                "get_directions",
                "A route between two places by car, bike, foot or transit, with steps.",
                ("origin", "destination"),
            ),
            (
                "get_travel_time",
                "How long it takes to get from one place to another now.",
                ("origin", "destination"),
            ),
            ("geocode_address", "Turn a street address into latitude and longitude.", ("address",)),
            (
                "reverse_geocode",
                "Turn latitude and longitude into the nearest street address.",
                ("lat", "lng"),
            ),
            (
                "get_distance_matrix",
                "Distances and times between several origins and destinations.",
                ("origins", "destinations"),
            ),
        ),
    ),
    Domain(
        "finance",
        "the market data service",
        (_r("watchlist", "a saved list of stock symbols", ("get", "list", "create", "update", "delete")),),
        (
            ("get_stock_quote", "The latest price and daily change of a stock symbol.", ("symbol",)),
            (
                "get_price_history",
                "Daily open, high, low and close prices of a stock over a period.",
                ("symbol", "start_date"),
            ),
            ("get_exchange_rate", "The current rate between two currencies.", ("base", "quote")),
            (
                "convert_currency",
                "Convert an amount from one currency to another at today's rate.",
                ("amount", "from_currency", "to_currency"),
            ),
            (
                "get_company_financials",
                "A listed company's revenue, earnings and margins by quarter.",
                ("symbol",),
            ),
            ("get_market_news", "Recent news headlines about a stock or the market.", ()),
            ("get_crypto_price", "The latest price of a cryptocurrency.", ("coin",)),
        ),
    ),
    Domain(
        "web",
        "the web toolkit",
        (),
        (
            (
                "search",
                "Search the web and return ranked results with titles, links and snippets.",
                ("query",),
            ),
            ("fetch_page", "Download a web page and return its main text.", ("url",)),
            ("screenshot_page", "Take a picture of how a web page looks in a browser.", ("url",)),
            ("check_link_status", "Whether a URL responds and with which HTTP status.", ("url",)),
            ("search_news", "Search recent news articles from many publishers.", ("query",)),
            ("search_images", "Search the web for pictures matching a description.", ("query",)),
        ),
    ),
    Domain(
        "text",
        "the text utilities",
        (),
        (
            ("translate", "Translate text into another language.", ("text", "target_language")),
            ("detect_language", "Tell which language a text is written in.", ("text",)),
            ("summarize", "Shorten a long text to its main points.", ("text",)),
            ("count_words", "Count the words and characters in a text.", ("text",)),
            ("check_spelling", "Find and correct spelling mistakes in a text.", ("text",)),
            (
                "extract_entities",
                "Find the people, organisations, places and dates named in a text.",
                ("text",),
            ),
            ("analyze_sentiment", "Whether a text is positive, negative or neutral in tone.", ("text",)),
            ("extract_keywords", "The most important terms in a text.", ("text",)),
        ),
    ),
    Domain(
        "math",
        "the calculator",
        (),
        (
            ("calculate", "Evaluate an arithmetic expression.", ("expression",)),
            (
                "convert_units",
                "Convert a quantity between units of length, weight, volume or temperature.",
                ("value", "from_unit", "to_unit"),
            ),
            (
                "compute_statistics",
                "Mean, median, standard deviation and range of a list of numbers.",
                ("numbers",),
            ),
            ("solve_equation", "Solve an algebraic equation for a variable.", ("equation",)),
            (
                "compound_interest",
                "What a sum grows to at an interest rate over years.",
                ("principal", "rate", "years"),
            ),
            (
                "loan_payment",
                "The monthly repayment of a loan at a rate over a term.",
                ("principal", "rate", "months"),
            ),
        ),
    ),
    Domain(
        "time",
        "the clock service",
        (),
        (
            ("get_current_time", "The current date and time in a time zone.", ("timezone",)),
            (
                "convert_timezone",
                "Convert a date and time from one time zone to another.",
                ("datetime", "from_zone", "to_zone"),
            ),
            ("add_days", "The date a number of days after (or before) a date.", ("date", "days")),
            ("days_between", "How many days lie between two dates.", ("start_date", "end_date")),
            ("get_public_holidays", "Public holidays of a country in a year.", ("country", "year")),
            ("get_weekday", "Which day of the week a date falls on.", ("date",)),
            (
                "business_days_between",
                "Working days between two dates, leaving out weekends and holidays.",
                ("start_date", "end_date"),
            ),
        ),
    ),
    Domain(
        "identity",
        "the identity provider",
        (
            _r(
                "user",
                "a login account: email, name, status, groups",
                _RECORD,
                ("search", "suspend", "unsuspend"),
            ),
            _r("group", "a set of users who share access", ("get", "list", "create", "delete")),
            _r("api_key", "a credential a program uses to call the API", ("list", "create", "revoke")),
            _r("session", "a signed-in browser or device", ("list", "revoke")),
        ),
        (
            ("reset_password", "Send a user a link to choose a new password.", ("user_id",)),
            ("add_user_to_group", "Give a user the access of a group.", ("user_id", "group_id")),
            ("remove_user_from_group", "Take a user out of a group.", ("user_id", "group_id")),
            ("get_audit_log", "Who signed in, changed settings or accessed data, and when.", ()),
            ("enroll_mfa", "Require a second sign-in factor for a user.", ("user_id",)),
        ),
    ),
    Domain(
        "security",
        "the security scanner",
        (
            _r(
                "vulnerability",
                "a known weakness found in a system or dependency",
                ("get", "list", "assign", "resolve"),
                plural="vulnerabilities",
            ),
            _r("scan", "a run of the scanner over a target", ("get", "list", "start", "cancel")),
        ),
        (
            ("check_password_breach", "Whether a password appears in known data breaches.", ("password",)),
            ("get_certificate_expiry", "When a website's TLS certificate runs out.", ("hostname",)),
        ),
    ),
    Domain(
        "database",
        "the database admin tool",
        (
            _r("table", "a table in a database with its columns", ("get", "list", "create", "delete")),
            _r("backup", "a saved copy of a database", ("get", "list", "create", "restore", "delete")),
        ),
        (
            ("run_query", "Run a read-only SQL query and return the rows.", ("sql",)),
            ("explain_query", "Show how the database would execute a SQL query and its cost.", ("sql",)),
            ("get_slow_queries", "The slowest queries of the past day with their timings.", ()),
        ),
    ),
    Domain(
        "legal",
        "the contract system",
        (
            _r(
                "contract",
                "an agreement with a customer or supplier: parties, terms, renewal date",
                _DOC,
                ("sign", "renew", "search"),
            ),
            _r(
                "signature_request",
                "a document sent out for e-signature",
                ("get", "list", "create", "cancel", "remind"),
            ),
        ),
        (("get_expiring_contracts", "Contracts whose term ends within the next days.", ("days",)),),
    ),
    Domain(
        "facilities",
        "the office management tool",
        (
            _r(
                "desk_booking", "a reserved desk in the office for a day", ("get", "list", "create", "cancel")
            ),
            _r("maintenance_request", "a report of something broken in the office", _FLOW),
            _r("visitor", "a guest expected at the office", ("list", "create", "check_in")),
        ),
        (("get_office_occupancy", "How many people are in each office today.", ()),),
    ),
    Domain(
        "learning",
        "the training platform",
        (
            _r("course", "a training course with lessons and a quiz", _RECORD, ("search", "enroll")),
            _r("enrollment", "a learner's place in a course and their progress", ("get", "list", "cancel")),
            _r("certificate", "proof a learner completed a course", ("get", "list", "pdf")),
        ),
        (),
    ),
    Domain(
        "health",
        "the clinic scheduling system",
        (
            _r(
                "appointment",
                "a patient's visit with a doctor at a time",
                ("get", "list", "create", "cancel", "reschedule"),
            ),
            _r("patient", "a person registered at the clinic", ("get", "search", "create", "update")),
            _r("prescription", "medicine a doctor prescribed", ("get", "list", "renew")),
        ),
        (("get_doctor_availability", "Open appointment times of a doctor.", ("doctor_id",)),),
    ),
    Domain(
        "realestate",
        "the property management system",
        (
            _r(
                "property",
                "a building or unit for rent",
                ("get", "list", "search", "create", "update"),
                plural="properties",
            ),
            _r(
                "lease",
                "a rental agreement with a tenant",
                ("get", "list", "create", "renew", "terminate", "pdf"),
            ),
            _r("tenant", "a person renting a unit", ("get", "list", "create", "update")),
            _r("rent_payment", "rent received from a tenant", ("list", "create", "remind")),
        ),
        (),
    ),
    Domain(
        "iot",
        "the device fleet",
        (
            _r(
                "device",
                "a connected sensor or machine",
                ("get", "list", "reboot", "update", "delete", "rename"),
            ),
            _r("firmware", "software that runs on a device", ("list", "upload", "deploy")),
        ),
        (
            (
                "get_sensor_readings",
                "Recent temperature, humidity and power readings of a device.",
                ("device_id",),
            ),
            ("set_thermostat", "Set the target temperature of a thermostat.", ("device_id", "temperature")),
            ("turn_on_light", "Switch a light on, with brightness and colour.", ("device_id",)),
            ("turn_off_light", "Switch a light off.", ("device_id",)),
            ("lock_door", "Lock a smart door lock.", ("device_id",)),
            ("unlock_door", "Unlock a smart door lock.", ("device_id",)),
        ),
    ),
    Domain(
        "media",
        "the media library",
        (
            _r("playlist", "an ordered list of songs", ("get", "list", "create", "delete", "add_track")),
            _r("podcast_episode", "one episode of a podcast show", ("get", "list", "search")),
        ),
        (
            ("search_music", "Find songs, albums and artists by name.", ("query",)),
            ("play_track", "Start playing a song on a speaker.", ("track_id",)),
            ("pause_playback", "Pause what is playing.", ()),
            ("transcribe_audio", "Turn speech in an audio file into text.", ("file_id",)),
            ("resize_image", "Change the width and height of an image.", ("file_id", "width", "height")),
            ("convert_video", "Convert a video file to another format.", ("file_id", "format")),
        ),
    ),
    Domain(
        "food",
        "the food delivery service",
        (
            _r("restaurant", "a restaurant that delivers: cuisine, menu, rating", ("get", "search")),
            _r("delivery_order", "a meal ordered for delivery", ("get", "list", "create", "cancel", "track")),
        ),
        (
            ("get_menu", "The dishes a restaurant offers with prices.", ("restaurant_id",)),
            ("find_recipe", "Recipes that use given ingredients.", ("ingredients",)),
            ("get_nutrition_facts", "Calories, protein, fat and carbohydrates of a food.", ("food",)),
        ),
    ),
    Domain(
        "survey",
        "the survey tool",
        (
            _r(
                "survey",
                "a questionnaire with questions",
                ("get", "list", "create", "delete", "publish", "close"),
            ),
            _r("response", "one person's answers to a survey", ("get", "list", "export", "delete")),
        ),
        (("get_survey_results", "Summarised answers to each question of a survey.", ("survey_id",)),),
    ),
    Domain(
        "insurance",
        "the insurance policy system",
        (
            _r(
                "policy",
                "an insurance policy: cover, premium, renewal date",
                _DOC,
                ("renew",),
                plural="policies",
            ),
            _r("claim", "a request to be paid for a loss covered by a policy", _FLOW, ("history",)),
            _r("quote", "a price offered for new insurance cover", ("get", "list", "create", "accept")),
        ),
        (
            (
                "get_premium_schedule",
                "When each insurance premium instalment is due and how much.",
                ("policy_id",),
            ),
        ),
    ),
    Domain(
        "itassets",
        "the IT asset register",
        (
            _r(
                "laptop",
                "a company computer: model, serial number, owner, warranty",
                _RECORD,
                ("assign", "retire"),
            ),
            _r(
                "software_license",
                "a paid seat of an application",
                ("get", "list", "assign", "revoke", "count"),
            ),
            _r("phone", "a company mobile phone and its number", ("get", "list", "assign", "wipe")),
        ),
        (
            (
                "get_warranty_status",
                "Whether a device is still under the maker's warranty and until when.",
                ("serial_number",),
            ),
        ),
    ),
    Domain(
        "events",
        "the event ticketing platform",
        (
            _r(
                "event",
                "a public event with a date, venue and ticket types",
                _RECORD,
                ("publish", "cancel", "duplicate"),
            ),
            _r(
                "ticket",
                "an attendee's admission to an event",
                ("get", "list", "create", "cancel", "transfer", "check_in"),
            ),
            _r("attendee", "a person registered for an event", ("get", "list", "search", "export", "count")),
            _r("venue", "a place where events are held", ("get", "list", "create")),
        ),
        (("get_ticket_sales", "Tickets sold and revenue per day for an event.", ("event_id",)),),
    ),
    Domain(
        "fleet",
        "the vehicle fleet manager",
        (
            _r("vehicle", "a company car, van or truck: plate, mileage, driver", _RECORD, ("assign",)),
            _r(
                "service_appointment",
                "a booked garage visit for a vehicle",
                ("get", "list", "create", "cancel"),
            ),
            _r("fuel_log", "a fuel purchase for a vehicle", ("list", "create", "export")),
        ),
        (
            ("get_vehicle_location", "Where a vehicle is now, from its GPS tracker.", ("vehicle_id",)),
            ("get_driver_hours", "Hours a driver has driven this week, for rest-time rules.", ("driver_id",)),
        ),
    ),
    Domain(
        "donations",
        "the fundraising system",
        (
            _r("donor", "a person or organisation that gives money", _RECORD, ("search", "merge")),
            _r("donation", "a gift of money from a donor", ("get", "list", "create", "refund", "export")),
            _r("receipt", "a tax receipt for a donation", ("get", "pdf", "send")),
            _r("fundraiser", "a fundraising campaign with a goal", ("get", "list", "create", "close")),
        ),
        (),
    ),
    Domain(
        "school",
        "the school information system",
        (
            _r("student", "a pupil: class, guardians, contact details", _RECORD, ("search",)),
            _r("grade", "a mark a student got for an assignment or exam", ("list", "create", "update")),
            _r("attendance_record", "whether a student was present on a day", ("list", "create", "update")),
            _r("assignment", "homework set for a class", _RECORD),
            _r("report_card", "a term's summary of a student's grades", ("get", "pdf", "send")),
        ),
        (("get_timetable", "The weekly lesson schedule of a class.", ("class_id",)),),
    ),
    Domain(
        "manufacturing",
        "the factory system",
        (
            _r(
                "work_order",
                "an order to produce a quantity of a product on a line",
                _FLOW,
                ("start", "complete"),
            ),
            _r(
                "bill_of_materials",
                "the parts and quantities a product is made of",
                ("get", "list", "update"),
                plural="bills_of_materials",
            ),
            _r("machine", "a machine on the shop floor", ("get", "list", "stop", "start")),
            _r("quality_check", "an inspection of produced units and its result", ("get", "list", "create")),
        ),
        (("get_downtime_report", "How long each machine stood still and why, per shift.", ()),),
    ),
    Domain(
        "hotel",
        "the hotel front desk",
        (
            _r(
                "reservation",
                "a guest's room booking: dates, room type, rate",
                _RECORD,
                ("cancel", "check_in", "check_out"),
            ),
            _r("guest", "a person staying at the hotel", ("get", "search", "update")),
            _r("housekeeping_task", "a room to clean or restock", ("list", "create", "complete")),
        ),
        (
            (
                "get_room_availability",
                "Free rooms by type for a range of dates.",
                ("check_in_date", "check_out_date"),
            ),
            ("get_folio", "A guest's itemised bill for their stay.", ("reservation_id",)),
        ),
    ),
    Domain(
        "library",
        "the library catalogue",
        (
            _r("book", "a title in the library: author, ISBN, copies", ("get", "search", "reserve")),
            _r(
                "loan",
                "a book a member borrowed and when it is due back",
                ("list", "create", "renew", "return"),
            ),
            _r("member", "a library card holder", ("get", "search", "create", "update")),
        ),
        (("get_overdue_loans", "Borrowed books past their due date, with fines owed.", ()),),
    ),
)
