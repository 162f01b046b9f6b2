"""Compound requests over the 1,000-tool catalogue: two or three parts, each needing its own tool.

Issue 30: on a catalogue kept outside the repo, requests of two parts ("Look on the internet for the
latest news about flights, then modify the flight records in the travel desk") lost the tool of their
short, generic part: the whole request was ranked at once, and the part with more specific words took
the budget. These requests measure that here. They were written before the ranking was changed for
them, and first run on the code as it stood (``benchmarks/results/retrieval-*-compound-first-run.md``);
none was reworded after.

How they are written: each part in the words a user types, avoiding the words of the tool it needs
where a synonym is natural ("look on the internet", "put it into Spanish", "ping the team"); joined
the ways people join steps (", then", a new sentence, "after that", "and then", a semicolon, and a few
with a bare "and", which the planner's parts do not split). The parts count is the number of tools a
request needs, one per part.
"""

from __future__ import annotations

from benchmarks.retrieval_queries import LabelledQuery, _q

COMPOUND: tuple[LabelledQuery, ...] = (
    # two parts
    _q(
        "Look on the internet for the latest news about flights, then modify the flight records in the "
        "travel desk",
        "web_search",
        "travel_book_flight",
    ),
    _q(
        "Google the address of the Berlin trade fair, then work out how long the drive from our office takes",
        "web_search",
        "maps_get_travel_time",
    ),
    _q(
        "Find online what people say about the new Fairphone. After that, tell me if the tone is good or bad",
        "web_search",
        "text_analyze_sentiment",
    ),
    _q(
        "Put this paragraph into Spanish, then ping the marketing room with it",
        "text_translate",
        "chat_send_message",
    ),
    _q(
        "Check whether it's going to rain in Porto over the next few days; then reserve a hotel there for "
        "Friday",
        "weather_get_forecast",
        "travel_book_hotel",
    ),
    _q(
        "Pull up the customer's unpaid bills, then email them a reminder",
        "billing_list_invoices",
        "mail_send_message",
    ),
    _q(
        "What's the dollar worth in yen today? Then work out 3 * 1250 for the invoice",
        "finance_get_exchange_rate",
        "math_calculate",
    ),
    _q(
        "Boil this long report down to a few bullet points, then save it as a new doc in the shared drive",
        "text_summarize",
        "docs_create_document",
    ),
    _q(
        "Grab the text of https://example.com/pricing and then tell me which firms and people it mentions",
        "web_fetch_page",
        "text_extract_entities",
    ),
    _q(
        "Who is holding the pager for the payments service right now? Then raise an incident for the "
        "checkout errors",
        "monitoring_get_on_call",
        "monitoring_create_incident",
    ),
    _q(
        "Search the internet for a good sourdough guide, after that add a to-do to bake on Saturday",
        "web_search",
        "tasks_create_task",
    ),
    _q(
        "Look up on the web who founded Contoso, then save them as a new prospect in the sales system",
        "web_search",
        "crm_create_lead",
    ),
    _q(
        "Restart the web-01 server, then let the ops channel know it is back",
        "cloud_reboot_instance",
        "chat_send_message",
    ),
    _q(
        "How many workdays are there between 3 March and 28 March? Then book the time off for that stretch",
        "time_business_days_between",
        "hr_create_time_off_request",
    ),
    _q(
        "Transcribe the voicemail recording, then give me the gist of it in three lines",
        "media_transcribe_audio",
        "text_summarize",
    ),
    _q(
        "Snap a picture of how our landing page renders, then post it to the design room",
        "web_screenshot_page",
        "chat_send_message",
    ),
    _q(
        "Is the link on our careers page still alive? then open a bug in the website repo if not",
        "web_check_link_status",
        "code_create_issue",
    ),
    _q(
        "Find a Thai place that delivers near the office, then get its dishes and prices",
        "food_search_restaurants",
        "food_get_menu",
    ),
    _q(
        "What holidays does Spain have this year? Then set up an out-of-office for those days",
        "time_get_public_holidays",
        "mail_set_auto_reply",
    ),
    _q(
        "Look on the internet for reviews of the Hotel Adlon; after that reserve two nights there",
        "web_search",
        "travel_book_hotel",
    ),
    _q(
        "Find me some photos of red sneakers online, then shrink the best one to 400 by 400",
        "web_search_images",
        "media_resize_image",
    ),
    _q(
        "Kill the stuck deploy pipeline, then kick off the build again",
        "ci_cancel_pipeline",
        "ci_start_pipeline",
    ),
    _q(
        "Turn 30 miles into kilometres. Then tell me how long the cycle ride from Delft to Leiden is",
        "math_convert_units",
        "maps_get_travel_time",
    ),
    _q(
        "What's the weather doing in Oslo at the moment and then let my team know in chat",
        "weather_get_current_weather",
        "chat_send_message",
    ),
    _q(
        "Google the opening hours of the Louvre and add a visit to my calendar for Sunday",
        "web_search",
        "calendar_create_event",
    ),
    _q(
        "Check the pollution level in Delhi and ping Ravi about it",
        "weather_get_air_quality",
        "chat_send_message",
    ),
    # three parts
    _q(
        "Look on the internet for the latest news about flights, then modify the flight records in the "
        "travel desk, "
        "then email the team a summary",
        "web_search",
        "travel_book_flight",
        "mail_send_message",
    ),
    _q(
        "Find online the cheapest way to ship to Norway. Then make a shipping label for order 8812. "
        "After that, mark the ticket 4410 as solved",
        "web_search",
        "shipping_create_label",
        "support_close_ticket",
    ),
    _q(
        "Fetch the article at https://example.org/launch, then shorten it to its main points, then put it "
        "into French",
        "web_fetch_page",
        "text_summarize",
        "text_translate",
    ),
    _q(
        "Search the web for today's Brent crude price, then work out 80 * 1.07, then post the result in "
        "#finance",
        "web_search",
        "math_calculate",
        "chat_send_message",
    ),
    _q(
        "What's the weather going to be like in Rome this week? Then reserve a flight there for Thursday. "
        "Then put the trip in my calendar",
        "weather_get_forecast",
        "travel_book_flight",
        "calendar_create_event",
    ),
    _q(
        "Pull the quarterly P&L, then turn the total into euros, then send it to the CFO by email",
        "accounting_get_profit_and_loss",
        "finance_convert_currency",
        "mail_send_message",
    ),
    _q(
        "Google who the new CEO of Initech is; update their record in the contacts; then log that I phoned "
        "him",
        "web_search",
        "crm_update_contact",
        "crm_log_call",
    ),
    _q(
        "Look up directions from the hotel to the venue, then tell me what time it is in Tokyo, "
        "then remind me in chat at 5",
        "maps_get_directions",
        "time_get_current_time",
        "chat_create_reminder",
    ),
    _q(
        "Find online a good recipe for lentil soup, then tell me how many calories lentils have, "
        "then order dinner from the Indian place instead",
        "web_search",
        "food_get_nutrition_facts",
        "food_create_delivery_order",
    ),
    _q(
        "Check whether the password 'hunter2' has leaked, then lock account u-77 out, then reset its "
        "password",
        "security_check_password_breach",
        "identity_suspend_user",
        "identity_reset_password",
    ),
    _q(
        "Look on the internet for the conference dates. After that work out how many days are left until "
        "then. "
        "Then add it to the team's task board",
        "web_search",
        "time_days_between",
        "tasks_create_task",
    ),
    _q(
        "Detect which language this review is in, then translate it to English, then say if it's positive",
        "text_detect_language",
        "text_translate",
        "text_analyze_sentiment",
    ),
    _q(
        "Snapshot the database disk of db-02, then reboot the box, then let #ops know",
        "cloud_snapshot_volume",
        "cloud_reboot_instance",
        "chat_send_message",
    ),
    _q(
        "Search the web for the vendor's support phone number, then open a help-desk case about the outage, "
        "then hand it to Ahmed",
        "web_search",
        "support_create_ticket",
        "support_assign_ticket",
    ),
    _q(
        "Find me news coverage of our product launch, then pick out the key terms, then write a draft email "
        "about it",
        "web_search_news",
        "text_extract_keywords",
        "mail_create_draft",
    ),
    _q(
        "Tell me the sunrise time in Reykjavik tomorrow and then the UV level there, and then book a rental "
        "car",
        "weather_get_sunrise_sunset",
        "weather_get_uv_index",
        "travel_book_car_rental",
    ),
    _q(
        "Look up Tesla's stock price, then google what analysts are saying, then add it to my watchlist",
        "finance_get_stock_quote",
        "web_search",
        "finance_update_watchlist",
    ),
    _q(
        "Find online how much a kilo of coffee costs in Brazil; convert it to pounds sterling; "
        "then message the buyers' channel",
        "web_search",
        "finance_convert_currency",
        "chat_send_message",
    ),
)
